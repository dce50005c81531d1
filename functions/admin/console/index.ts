import './account.js'
export { adminConsole } from './app.js'
