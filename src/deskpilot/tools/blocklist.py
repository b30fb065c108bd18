"""Blocked apps: the list lives with the policy (:mod:`deskpilot.policy.blocklist`); this name
stays for the tools and commands that show or edit it."""

from __future__ import annotations

from deskpilot.policy.blocklist import DEFAULT_BLOCKLIST, DEFAULT_GROUPS, Blocklist, default_group

__all__ = ["DEFAULT_BLOCKLIST", "DEFAULT_GROUPS", "Blocklist", "default_group"]
