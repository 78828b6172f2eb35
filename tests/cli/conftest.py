from tests.helpers.packs import mini_pack

__all__ = ["mini_pack"]
