"""I/O policies by name; each lives in its own module behind `Policy` (see base.py)."""
from __future__ import annotations

from droidlag.iolab.sim.policies.base import Policy
from droidlag.iolab.sim.policies.cfq import Cfq
from droidlag.iolab.sim.policies.deadline import Deadline
from droidlag.iolab.sim.policies.faio import Faio
from droidlag.iolab.sim.policies.faio_fid import FaioFid
from droidlag.iolab.sim.policies.faio_fpm import FaioFpm
from droidlag.iolab.sim.policies.fasttrack import Fasttrack
from droidlag.iolab.sim.policies.noop import Noop
from droidlag.iolab.sim.policies.qasio import Qasio
from droidlag.iolab.sim.policies.rcp import Rcp
from droidlag.iolab.sim.policies.smartio import Smartio

POLICIES: dict[str, type[Policy]] = {c.name: c for c in (
    Noop, Cfq, Deadline, Qasio, Rcp, Smartio, FaioFpm, FaioFid, Faio, Fasttrack)}


def get_policy(name: str) -> Policy:
    """A fresh policy instance by name (noop, cfq, deadline, qasio, rcp, smartio, faio-fpm, faio-fid,
    faio, fasttrack)."""
    try:
        return POLICIES[name]()
    except KeyError:
        raise ValueError(f"unknown policy {name!r}; choose from {', '.join(POLICIES)}") from None


__all__ = ["POLICIES", "get_policy", "Policy"]
