/** What the admin console's pages are built with: the console kernel and the platform's page helpers, in one import. */
export * from '../../../lib/console/index.js'
export { loginUrl } from '../../../lib/pages.js'
export { auditContext } from '../../../lib/http.js'
