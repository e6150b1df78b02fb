"""LangChain's standard unit tests for tools (langchain-tests), run on CiteVerifyTool."""

from langchain_tests.unit_tests import ToolsUnitTests

from langchain_citeverify import CiteVerifyTool


class TestCiteVerifyToolStandard(ToolsUnitTests):
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


class TestCiteVerifyReferenceToolStandard(ToolsUnitTests):
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
