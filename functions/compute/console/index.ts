import './runs.js'
import './pipelines.js'
export { computeConsole } from './app.js'
