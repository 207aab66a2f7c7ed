"""The UI's page modules, registered in one list: a new area adds its module here.

Each module of `kvlake/ui/pages/` has `ROUTES` (made with `page.page`) and `NAV`
(its links in the navigation bar, each shown only to users allowed its operation),
and its templates in `kvlake/ui/templates/<area>/`.
"""

from __future__ import annotations

from typing import Final

from kvlake.ui.pages import (
    actions,
    admin,
    changes,
    commits,
    compare,
    objects,
    operations,
    refs,
    repositories,
    session,
    settings,
)

PAGE_MODULES: Final = (
    session,
    repositories,
    objects,
    refs,
    changes,
    commits,
    compare,
    operations,
    settings,
    actions,
    admin,
)

ROUTES: Final = [route for module in PAGE_MODULES for route in module.ROUTES]
NAV: Final = [item for module in PAGE_MODULES for item in module.NAV]
