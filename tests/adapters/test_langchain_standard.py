"""LangChain's standard tests for tools (langchain-tests), run on both tools, offline.

The unit tests check the tools' construction and schema; the integration tests invoke them (sync,
async, with and without a tool call) and check the output against the declared schema. Lookups
are off and the reference tool reads an in-memory local index: nothing reaches the network.
"""

import pytest
from langchain_tests.integration_tests import ToolsIntegrationTests
from langchain_tests.unit_tests import ToolsUnitTests

from langchain_citeverify import CiteVerifyTool


def async_suite(cls):
    cls = pytest.mark.asyncio(cls)
    return pytest.mark.filterwarnings(
        "ignore:.*is marked with '@pytest.mark.asyncio' but it is not an async function"
    )(cls)


class CiteVerifyToolParams:
    @property
    def tool_constructor(self):
        return CiteVerifyTool

    @property
    def tool_constructor_params(self):
        return {"policy": {"extensions": {"lookups": {"enabled": False}}}}

    @property
    def tool_invoke_params_example(self):
        return {
            "text": "The museum opens at nine.",
            "sources": ["The museum opens at nine and closes at five."],
        }


class CiteVerifyReferenceToolParams:
    @property
    def tool_constructor(self):
        from citeverify_core.references import LocalIndex, ReferenceVerifier
        from langchain_citeverify import CiteVerifyReferenceTool

        index = LocalIndex(":memory:")
        verifier = ReferenceVerifier(index)

        def build(**kwargs):
            return CiteVerifyReferenceTool(verifier=verifier, **kwargs)

        return build

    @property
    def tool_constructor_params(self):
        return {}

    @property
    def tool_invoke_params_example(self):
        return {
            "references": [
                "Kuhn, T. S. (1962). The Structure of Scientific Revolutions. University of Chicago Press."
            ]
        }


class TestCiteVerifyToolStandard(CiteVerifyToolParams, ToolsUnitTests):
    pass


# The suite's async tests carry no pytest-asyncio mark (this project runs it in strict mode), and
# the suite refuses overridden tests: the class is marked, and pytest-asyncio's remark on the
# suite's sync tests that the mark does not concern them is silenced.
@async_suite
class TestCiteVerifyToolIntegration(CiteVerifyToolParams, ToolsIntegrationTests):
    pass


class TestCiteVerifyReferenceToolStandard(CiteVerifyReferenceToolParams, ToolsUnitTests):
    pass


@async_suite
class TestCiteVerifyReferenceToolIntegration(CiteVerifyReferenceToolParams, ToolsIntegrationTests):
    pass
