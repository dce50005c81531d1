import { consolePages } from '../../../lib/console/index.js'
import type { AdminDeps } from '../deps.js'

/** The admin service's console (/console/...): account, tokens, the project chooser, organizations and projects. Pages register on it in their own files. */
export const adminConsole = consolePages<AdminDeps>()
