import './account.js'
export { adminConsole } from './app.js'
import './tokens.js'
