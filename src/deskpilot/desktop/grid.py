"""What a read holds of a virtual table or list (``Node.grid``, :mod:`deskpilot.desktop.base`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Grid:
    """What a read holds of a virtual table or list (a spreadsheet, a tree view, a long list:
    read by the part on screen): its size and the range read, inclusive."""

    rows: int  # rows of a table, items of a list
    columns: int  # 0 for a list
    first_row: int
    last_row: int
    first_column: int = 0
    last_column: int = -1
    #: column → its header's name (tree views; spreadsheets have none)
    headers: tuple[tuple[int, str], ...] = ()
    #: its cells are named by address ("B7"): a spreadsheet
    addressed: bool = False
    #: parts read together: a sheet's frozen or split panes (:mod:`deskpilot.ax.panes`)
    panes: int = 1

    @property
    def table(self) -> bool:
        return self.columns > 0

    def header(self, column: int) -> str:
        return dict(self.headers).get(column, "")
