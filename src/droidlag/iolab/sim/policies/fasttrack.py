"""fasttrack: FAIO plus preemption inside the device (FG writes overtake queued BG writes) and keeping
the FG app's pages in the page cache (reclaim takes other apps' pages first)."""
from __future__ import annotations

from droidlag.iolab.sim.policies.faio import Faio


class Fasttrack(Faio):
    name = "fasttrack"
    description = "FAIO + in-device preemption for FG requests + FG pages protected from reclaim"
    device_preempt = True
    protect_fg_pages = True
