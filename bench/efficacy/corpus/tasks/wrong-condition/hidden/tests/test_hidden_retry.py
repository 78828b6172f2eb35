import unittest

from net.retry import should_retry


class RetryStatusTest(unittest.TestCase):
    def test_server_errors_are_retried(self):
        self.assertTrue(should_retry(503, 1))
        self.assertTrue(should_retry(500, 2))

    def test_client_errors_are_not(self):
        self.assertFalse(should_retry(404, 1))
        self.assertFalse(should_retry(400, 1))
