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
