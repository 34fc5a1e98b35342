// The service's public face for the front doors.
export { createPowerService } from './service.js';
export { defaultDataDir } from './data-dir.js';
export { openMcpServers, type McpServersApi } from './api/mcp.js';
export type { PowerService, ServiceOptions } from './types.js';
