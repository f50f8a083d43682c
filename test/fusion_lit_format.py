"""The lit test format of the fusion suite (a module of its own, so that
lit's worker processes can unpickle it)."""
import copy

import lit.formats


class FusionShTest(lit.formats.ShTest):
    """ShTest that runs the tests of `config.roundtrip_known_failures`
    without fusion-opt's --verify-output-roundtrip (see lit.cfg.py)."""

    def execute(self, test, lit_config):
        path = "/".join(test.path_in_suite)
        if path in test.config.roundtrip_known_failures:
            test.config = copy.copy(test.config)
            test.config.substitutions = [
                (pattern, replacement.replace(" --verify-output-roundtrip", ""))
                for pattern, replacement in test.config.substitutions]
        return super().execute(test, lit_config)
