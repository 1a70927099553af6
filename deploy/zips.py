"""Rewriting a zip `chalice package` wrote, entry by entry, so what stays keeps its bytes, dates and compression."""
from __future__ import annotations

import os
import zipfile
from typing import Callable


def drop_entries(zip_path: str, dropped: Callable[[str], bool]) -> list[str]:
    """Rewrite the zip without the entries whose name `dropped` accepts; return their names (nothing rewritten when none)."""
    with zipfile.ZipFile(zip_path) as source:
        names = [info.filename for info in source.infolist() if dropped(info.filename)]
        if not names:
            return []
        partial = zip_path + ".partial"
        with zipfile.ZipFile(partial, "w") as target:
            for info in source.infolist():
                if not dropped(info.filename):
                    target.writestr(info, source.read(info), compress_type=info.compress_type)
    os.replace(partial, zip_path)
    return names
