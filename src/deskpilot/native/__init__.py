"""Provider-native computer use: coordinate actions on the same desktop, policy and audit log.

Models trained for computer use speak their vendor's computer tool: screenshots in, coordinate
actions out. This package turns those wire shapes into one action model and runs it through the
same :class:`~deskpilot.tools.toolset.ToolSet` door as the element tools::

    vendors/{openai,anthropic,gemini}.py   wire JSON  <->  ComputerCall / results   (pure)
    scaling.py                              model space <-> target pixels            (pure)
    actions.py, keymap.py                   the action model; vendor key names → keysyms (pure)
    calls.py                                ComputerCall / ComputerResult / ... + to/from_dict
    safety.py, session.py                   the call/result flow: approval, safety checks,
                                            checkpoints, batches, cancellation       (pure)
    tools.py                                ``computer`` / ``computer_view`` tools: blocked apps,
                                            consequential elements, the Desktop
    executor.py                             a batch of actions through ToolSet.call
    driver.py                               one model conversation: send, parse, ask, run, reply

Coordinates in the action model are pixels of the *target*: the whole screen (root window) or
one window's client area (window-relative). Vendor coordinates are converted at the boundary.
"""
