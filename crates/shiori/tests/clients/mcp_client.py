"""The official `mcp` Python client against `shiori mcp` (stdio) or `shiori serve`'s /mcp.

Usage: mcp_client.py stdio SHIORI_BIN DATA_DIR
       mcp_client.py http URL API_KEY
Exits non-zero at the first check that fails; an ImportError (the package is missing) fails too.
"""

import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


def text_of(result):
    return "\n".join(block.text for block in result.content if block.type == "text")


async def check(session):
    await session.initialize()
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    assert set(tools) == {"search", "ask", "list_documents", "get_document"}, sorted(tools)
    search_schema = tools["search"].input_schema
    assert search_schema["properties"]["query"]["type"] == "string", search_schema
    assert "query" in search_schema["required"], search_schema
    assert tools["ask"].description, tools["ask"]
    print("ok: tools", sorted(tools))

    found = await session.call_tool("search", {"query": "API rate limits on the Business plan", "top_k": 3})
    assert not found.is_error, text_of(found)
    hits = found.structured_content["hits"]
    assert hits[0]["chunk"]["doc_id"] == "faq-009" and len(hits) == 3, hits[0]
    assert "600 requests per minute" in text_of(found), text_of(found)
    print("ok: search", hits[0]["chunk"]["source"])

    # Whatever search hands out names a document get_document reads: the record faq-009.
    best = hits[0]["chunk"]
    for field in ["doc_id", "chunk_id", "source"]:
        read = await session.call_tool("get_document", {"id": best[field]})
        assert not read.is_error, (field, best[field], text_of(read))
        chunks = read.structured_content["chunks"]
        assert {chunk["doc_id"] for chunk in chunks} == {"faq-009"}, (field, chunks)
        assert "600 requests per minute" in text_of(read), (field, text_of(read))
    missing = await session.call_tool("get_document", {"id": "faq-999"})
    assert missing.is_error and "no indexed document" in text_of(missing), text_of(missing)
    print("ok: get_document reads a hit by doc_id, chunk_id and source", best["source"])

    answered = await session.call_tool("ask", {"question": "パスワードを忘れてしまいました。再設定メールのリンクはどのくらい有効ですか？"})
    assert not answered.is_error and not answered.structured_content["refused"], text_of(answered)
    assert "30分" in text_of(answered) and "Sources:" in text_of(answered), text_of(answered)
    print("ok: ask (Japanese)")

    refused = await session.call_tool("ask", {"question": "What is the capital of Peru?"})
    assert not refused.is_error and refused.structured_content["refused"], text_of(refused)
    print("ok: refusal", text_of(refused))

    wrong = await session.call_tool("search", {"query": 42})
    assert wrong.is_error and "invalid arguments" in text_of(wrong), text_of(wrong)
    unknown = await session.call_tool("ask", {"question": "q", "pipeline": "telepathy"})
    assert unknown.is_error and "pipeline" in text_of(unknown), text_of(unknown)
    still = await session.call_tool("search", {"query": "storage per workspace", "top_k": 1})
    assert not still.is_error, text_of(still)
    print("ok: bad arguments are tool errors and the next call works")

    listed = await session.call_tool("list_documents", {})
    ids = listed.structured_content["documents"]
    assert ids and all(not i.startswith("/") for i in ids), ids
    document = await session.call_tool("get_document", {"id": ids[0]})
    assert not document.is_error and "Kumo" in text_of(document), text_of(document)[:200]
    resources = (await session.list_resources()).resources
    assert str(resources[0].uri) == f"shiori://documents/{ids[0]}", resources[0]
    contents = (await session.read_resource(resources[0].uri)).contents
    assert contents[0].text == text_of(document), contents[0].text[:200]
    print("ok: documents and resources", ids)


async def main():
    if sys.argv[1] == "stdio":
        shiori_bin, data_dir = sys.argv[2:4]
        parameters = StdioServerParameters(command=shiori_bin, args=["--data-dir", data_dir, "mcp"])
        async with stdio_client(parameters) as (read, write):
            async with ClientSession(read, write) as session:
                await check(session)
    else:
        url, api_key = sys.argv[2:4]
        headers = {"Authorization": f"Bearer {api_key}"}
        async with create_mcp_http_client(headers=headers) as http:
            async with streamable_http_client(url, http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await check(session)


anyio.run(main)
