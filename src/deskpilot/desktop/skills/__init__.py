"""What every backend gets for free: the desktop's skills, written against the ports only.

One idea per module, each a small class given the ports
(:class:`~deskpilot.desktop.ports.bundle.Ports`) and the skills it builds on (composition, never
inheritance); the facade (:mod:`deskpilot.desktop.facade`) builds them all:

* :mod:`.raw_input` — keyboard and pointer aimed at a window (activated for the moment, the
  previous one restored), clicks with gaps apps can follow;
* :mod:`.pixels` — captures, and whether a window's pixels changed between reads;
* :mod:`.reading` — snapshots (settling after input, full reads when the pixels moved, GTK 4
  popovers placed, the app's popups over the window read with it), live element looks, settle;
  :mod:`.read_memo` — a window's last read, given again while nothing could have changed it;
* :mod:`.launching`, :mod:`.documents` — starting apps, URLs and documents, and waiting for the
  window that shows them;
* :mod:`.aiming` — where to point at an element; :mod:`.pointer` — click, hover, drag at a
  point, the window on top first; :mod:`.covering` — what covers an element of a page;
  :mod:`.hits` — one hit-test a point, shared by the cover check and the click;
* :mod:`.scrolling` — scrolling judged by what moved (:mod:`.shift`: whether an area's
  picture shows its content moved);
* :mod:`.elements`, :mod:`.filling`, :mod:`.cells`, :mod:`.choosing`, :mod:`.segments`,
  :mod:`.focus` — clicking, filling every kind of field, table cells, drop-down items, date
  segments, keyboard focus checked; :mod:`.keyed` — typing into a named element, its focus
  checked as the keys go.

May import: :mod:`deskpilot.desktop.ports`, :mod:`deskpilot.desktop.base` and the value
helpers (:mod:`deskpilot.desktop.caret`, :mod:`deskpilot.desktop.cell_refs`),
:mod:`deskpilot.config`, :mod:`deskpilot.errors`, :mod:`deskpilot._wait`, :mod:`deskpilot.pages`
(the agent browser's profile and rules, in :mod:`.launching` only). Never a backend
(:mod:`deskpilot.desktop.x11`, :mod:`deskpilot.desktop.atspi`, …) nor a platform library.
"""
