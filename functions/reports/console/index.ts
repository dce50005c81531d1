/** The report service's console: its pages register on the one sub-app (app.ts) as their modules load. */
import './lists.js'
import './report.js'
import './variants.js'

export { reportsConsole } from './app.js'
