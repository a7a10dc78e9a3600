"""faio: the page manager and the I/O dispatcher together."""
from __future__ import annotations

from droidlag.iolab.sim.policies.cfq import CfqScheduler
from droidlag.iolab.sim.policies.faio_fid import FidScheduler
from droidlag.iolab.sim.policies.faio_fpm import FaioFpm


class Faio(FaioFpm):
    name = "faio"
    description = "FG page manager + FG I/O dispatcher"
    fpm = True
    fid = True

    def make_scheduler(self):
        return FidScheduler(CfqScheduler())
