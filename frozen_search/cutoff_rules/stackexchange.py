"""Stack Exchange's cutoff rule, as data (design.md, "Stack Exchange"; issue 5). Pure: no I/O, no clock.

A document is one question thread (``mathoverflow:12345``). Eligible: the question was created before ``T`` and
was not deleted at ``T``. Displayed at ``T``: the question's title, body and tags as of its last revision before
``T``, the answers created before ``T`` (each body as of its last revision before ``T``), the comments created
before ``T`` whose text is proven final before ``T`` (:data:`COMMENT_EDIT_WINDOW`), and a closed or locked notice
only as rebuilt from close/reopen and lock/unlock events before ``T``. A post deleted at ``T`` is invisible (a
deleted question: ``not_found_before_cutoff``); posts merged or migrated in after ``T`` are not shown (see
:data:`MOVE_IN_KINDS`). An answer deleted at ``T`` is in today's data only because it was undeleted after ``T``:
at ``T`` the thread is the one without it at all (its history, its comments, its events as dates), as a dump or a
listing taken then shows it (audit 7).

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
    36: "migrated_in", 38: "merged_in",  # "post migrated here", "post merge destination"
})
# Membership (which posts a thread held at ``T``) comes from today's ParentId, so moves are replayed as follows
# (dump and live alike, :func:`frozen_search.adapters.stackexchange.thread.thread_states`):
# - a question migrated here (36, or the API's ``migrated_from.on_date``) at ``m`` was on another site before
#   ``m``: the thread has no state before ``m`` (at ``T <= m`` it answers exactly like an id that never existed);
# - a post with a move-in event of its own (36/38 on an answer) is shown only from that event on;
# - a merge into the question (38) at ``m`` moved answers in, and which ones cannot be told: every answer created
#   before ``m`` is shown only from ``m`` on. Before ``m`` the thread shows its own content as it stood (the
#   question's title, body, tags, closure, lock and its own comments — a comment stays on its post), with no word
#   of the merge;
# - an answer created before its question was asked came from elsewhere at an unknown time: never shown unless a
#   move-in event dates its arrival.
# Posts merged or migrated *away* (37, 35) are simply absent today: omitted, never invented.
MOVE_IN_KINDS = ("migrated_in", "merged_in")

# Comments have no public history and the API and the dumps give today's text. Authors can edit a comment only in
# the first five minutes after posting (meta.stackoverflow.com/questions/19756), so its text is final from
# ``posted + COMMENT_EDIT_WINDOW`` on: a comment is shown from then on, or from its posting when the API says it
# was never edited (``edited: false``). A comment posted less than five minutes before ``T`` and edited (or whose
# ``edited`` flag is unknown, as in dumps) is left out at ``T``. Residual: moderators can edit any comment at any
# time without a trace; such an edit after ``T`` is not detectable. Likewise a comment deleted before ``T`` and
# undeleted after it: no dump row or API object records a comment's deletion, so it is shown at ``T`` like any other.
COMMENT_EDIT_WINDOW = 300  # seconds (a dump thread counts it in its milliseconds: Thread.settled)

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
