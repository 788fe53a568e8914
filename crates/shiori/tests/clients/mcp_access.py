"""What one API key sees through `shiori serve`'s /mcp, with the official `mcp` Python client.

Usage: mcp_access.py URL API_KEY QUESTION TOP_K
Prints one JSON object: the sources of `search` (top_k hits) and of `ask` for QUESTION, the
documents `list_documents` names, and for each of them whether `get_document` and the resource
read succeed. The Rust test judges what the key may see; an ImportError fails the run.
"""

import json
import sys

import anyio
from mcp.client.session import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


async def report(session, question, top_k):
    await session.initialize()
    found = await session.call_tool("search", {"query": question, "top_k": top_k})
    assert not found.is_error, found
    answered = await session.call_tool("ask", {"question": question})
    assert not answered.is_error, answered
    listed = await session.call_tool("list_documents", {})
    ids = listed.structured_content["documents"]
    resources = [str(r.uri) for r in (await session.list_resources()).resources]
    return {
        "search": [hit["chunk"]["source"] for hit in found.structured_content["hits"]],
        "ask_sources": [s["source"] for s in answered.structured_content["sources"]],
        "ask_answer": answered.structured_content["answer"],
        "documents": ids,
        "resources": resources,
    }


async def readable(session, document_id):
    read = await session.call_tool("get_document", {"id": document_id})
    return not read.is_error


async def main():
    url, api_key, question, top_k = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    probes = sys.argv[5:]
    headers = {"Authorization": f"Bearer {api_key}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                result = await report(session, question, top_k)
                result["readable"] = {probe: await readable(session, probe) for probe in probes}
    print(json.dumps(result))


anyio.run(main)
