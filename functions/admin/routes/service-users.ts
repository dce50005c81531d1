import { resourceApp } from '../../../lib/http.js'
import type { AdminDeps } from '../app.js'

// Placeholder, being written now: see the issue. Mounted by app.ts.
export function serviceUsersRoutes(_deps: AdminDeps) {
  return resourceApp()
}
