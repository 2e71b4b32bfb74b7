"""Output: each result type's renderers and its output contract, and the one ``emit``.

:mod:`.formats` names each result type's formats (enums the command line takes), :mod:`.emit`
writes a result in one of them and returns the exit code. Renderers lay out what the checks
decided; they never decide a status themselves: the doctor report (:mod:`.doctor`), the fleet
report (:mod:`.fleet`), the matrix commands (:mod:`.matrix`) and the others have theirs here.
"""
