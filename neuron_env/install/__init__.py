"""Installing TorchNeuron environments: plan (pure), backends (uv, pip), transaction, verification,
wheelhouses and system (apt) steps.

The layers: :mod:`.plan` turns a resolved target into an :class:`InstallPlan`; :mod:`.prepare`
finds the target environment and the backend; :mod:`.transaction` builds beside the target,
verifies (:mod:`.verify`) and swaps; :mod:`.download` fills wheelhouses; :mod:`.system` lists and
runs the apt steps.
"""

from neuron_env.install.plan import IndexRoute, InstallPlan, PlannedPackage, make_plan

__all__ = ["IndexRoute", "InstallPlan", "PlannedPackage", "make_plan"]
