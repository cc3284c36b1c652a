"""Verification as git fsck does it: findings with location and remedy, git's message ids and exit bits."""
