"""Provider-native computer use: coordinate actions on the same desktop, policy and audit log.

Models trained for computer use speak their vendor's computer tool: screenshots in, coordinate
actions out. This package is what every vendor shares: one action model, the contract for a
vendor's wire, and the flow that runs a model's calls through the same
:class:`~deskpilot.tools.toolset.ToolSet` door as the element tools::

    wire.py                 what a vendor's computer-use wire provides (the vendors' own
                            wires live with their adapters in deskpilot.agent.providers)
    scaling.py              model space <-> target pixels                            (pure)
    actions.py, keymap.py   the action model; vendor key names → keysyms             (pure)
    calls.py                ComputerCall / ComputerResult / ... + to/from_dict
    safety.py, session.py   the call/result flow: approval, safety checks, checkpoints,
                            batches, cancellation                                    (pure)
    tools.py                ``computer`` / ``computer_view`` tools: blocked apps,
                            consequential elements, the Desktop
    executor.py             a batch of actions through ToolSet.call
    player.py               one model turn's calls played in order, results in order

The loop around them (asking the model, budgets, timeouts, pausing) is the agent's
(:mod:`deskpilot.agent.computer`). Imports: deskpilot's desktop, tools, policy and events
layers; never deskpilot.agent.

Coordinates in the action model are pixels of the *target*: the whole screen (root window) or
one window's client area (window-relative). Vendor coordinates are converted at the boundary.
"""
