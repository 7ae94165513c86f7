"""nbgrader's submit, with the hand-in readable by the instructor's group alone.

nbgrader's own `submit` leaves each hand-in folder in the exchange's `inbound/` mode 0777
with its files 0644, hidden only by its random name: a student who learnt another's name
could read or change it. The inbound folder is set-group-id to the instructor's group (see
privacy.py), so a hand-in folder created in it belongs to that group; this submit then
closes that folder to everyone else (2770: the instructor's group enters it, reads and
removes what is in it; the student owns it; other students cannot enter it, so the files
in it, left as nbgrader writes them, are out of their reach). Only the folder: files
nbgrader writes after copying get the student's own group (copying clears the folder's
set-group-id bit), so closing them to "others" would lock the instructor out too. Where
the folder did not get the inbound folder's group, nbgrader's modes are kept, with a
warning, so the instructor can still collect it.

Students' environment only (student_env.py copies this file there as a top-level module
and names it in their nbgrader config): it imports nbgrader alone.
"""

from __future__ import annotations

import os
import stat

from nbgrader.exchange.default.submit import ExchangeSubmit

PRIVATE_FOLDER = 0o2770


class PrivateSubmit(ExchangeSubmit):  # type: ignore[misc]
    """`nbgrader submit` whose hand-in only the instructor's group may read."""

    def copy_files(self) -> None:
        super().copy_files()
        inbound = os.stat(self.inbound_path)
        handed_in = os.path.join(self.inbound_path, self.assignment_filename)
        if not inbound.st_mode & stat.S_ISGID or os.stat(handed_in).st_gid != inbound.st_gid:
            self.log.warning("inbound is not set-group-id: the hand-in keeps nbgrader's modes")
            return
        os.chmod(handed_in, PRIVATE_FOLDER)
