// The floor for the tools/list benchmark: a server written with the official TypeScript SDK,
// on stdio, with one small tool — what listing costs a client when the list costs nothing.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';

const server = new McpServer({ name: 'floor', version: '1.0.0' });
server.registerTool(
  'echo',
  { description: 'Echo the text back.', inputSchema: {}, outputSchema: {} },
  async () => ({ content: [{ type: 'text', text: 'ok' }], structuredContent: {} }),
);
await server.connect(new StdioServerTransport());
