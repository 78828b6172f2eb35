import unittest

from net.retry import MAX_ATTEMPTS, should_retry


class RetryTest(unittest.TestCase):
    def test_no_retry_after_the_last_attempt(self):
        self.assertFalse(should_retry(503, MAX_ATTEMPTS))
