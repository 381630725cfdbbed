"""Stack Exchange's cutoff rule, as data (design.md, "Stack Exchange"; issue 5). Pure: no I/O, no clock.

A document is one question thread (``mathoverflow:12345``). Eligible: the question was created before ``T`` and
was not deleted at ``T``. Displayed at ``T``: the question's title, body and tags as of its last revision before
``T``, the answers created before ``T`` (each body as of its last revision before ``T``), the comments created
before ``T``, and a closed or locked notice only as rebuilt from close/reopen and lock/unlock events before ``T``.
A post deleted at ``T`` is invisible (a deleted question: ``not_found_before_cutoff``).

Revisions carry title, body and tags as separate deltas (an edit of the title alone has no body): each is carried
forward from its own last revision. PostHistoryTypeId codes follow the data dump's schema (``PostHistoryTypes``,
Stack Exchange Data Explorer / the dump's readme); the API's ``/posts/{ids}/revisions`` gives the same deltas as
``title``/``body``/``tags`` present only on the revisions that changed them, and state changes as entries without a
``revision_number`` (``revision_type == "vote_based"`` or a comment naming the change).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# PostHistoryTypeId -> what it changes. 1-3 initial, 4-6 edit, 7-9 rollback (Text holds the restored value).
HISTORY_KINDS: Mapping[int, str] = MappingProxyType({
    1: "title", 4: "title", 7: "title",
    2: "body", 5: "body", 8: "body",
    3: "tags", 6: "tags", 9: "tags",
    10: "close", 11: "reopen",
    12: "delete", 13: "undelete",
    14: "lock", 15: "unlock",
    36: "moved_in", 38: "moved_in",  # "post migrated here", "post merge destination"
})
# A thread's membership comes from today's ParentId: after a merge (38) or a migration to this site (36) at ``m``,
# posts that belonged elsewhere before ``m`` sit in it, so what the thread held before ``m`` cannot be proven:
# every state before the last such event is refused (``content_unproven``). Posts merged or migrated *away*
# (37, 35) are simply absent today: omitted, never invented.

# Close reasons (PostHistory type 10 ``Comment``): 1-10 before June 2013, 101-105 after (dump readme).
CLOSE_REASONS: Mapping[str, str] = MappingProxyType({
    "1": "exact duplicate", "2": "off-topic", "3": "subjective and argumentative", "4": "not a real question",
    "7": "too localized", "10": "general reference", "20": "noise or pointless",
    "101": "duplicate", "102": "off-topic", "103": "unclear what you're asking", "104": "too broad",
    "105": "primarily opinion-based",
})


# Field names of the API and the dump that must never reach a response (the test of issue 5 scans for them).
NEVER_DISPLAYED_FIELDS = ("score", "up_vote_count", "down_vote_count", "is_accepted", "accepted_answer_id",
                          "view_count", "answer_count", "comment_count", "favorite_count", "bounty_amount",
                          "last_activity_date", "last_edit_date", "Score", "ViewCount", "AcceptedAnswerId",
                          "AnswerCount", "CommentCount", "FavoriteCount", "LastActivityDate", "LastEditDate")
