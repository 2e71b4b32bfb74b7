"""An entry that never returns (say, waiting on a download): loading it must time out."""

import time


def make():
    while True:
        time.sleep(60)
