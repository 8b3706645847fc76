"""`call_until_answered`: an idempotent service request is sent again until one reply comes (a reply can be
lost while the server's reply writer has not yet discovered the client)."""

from __future__ import annotations

import pytest
from rclpy.task import Future

from lerobot_ros.ros.runtime import call_until_answered


def test_a_lost_reply_is_asked_for_again():
    sent: list[Future] = []

    def call() -> Future:
        future = Future()
        if len(sent) == 2:  # the third request is answered
            future.set_result("reply")
        sent.append(future)
        return future

    assert call_until_answered(call, timeout=5.0, resend_s=0.05) == "reply"
    assert len(sent) == 3 and not sent[0].done() and not sent[1].done()


def test_no_reply_at_all_times_out_naming_what_was_awaited():
    sent: list[Future] = []
    with pytest.raises(TimeoutError, match=r"timed out after 0\.3 s waiting for a reply from /x/get_parameters"):
        call_until_answered(lambda: sent.append(Future()) or sent[-1], 0.3, 0.1, what="a reply from /x/get_parameters")
    assert 3 <= len(sent) <= 5
