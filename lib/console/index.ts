/** The console's kernel: what every service's console pages are built with (docs/console.md). */
export { csrfField, csrfToken, csrfValid } from './csrf.js'
export {
  badge,
  confirmView,
  consoleDocument,
  consoleUrl,
  errorView,
  field,
  historyUrl,
  ownConsoleUrl,
  pager,
  projectChooserUrl,
  redirectWithNotice,
  renderConsole,
  time,
  type ConsoleView,
  type Section,
  type Tone,
} from './layout.js'
export { checkForm, formRefusal, withoutBlanks, type FormCheck } from './forms.js'
export { consolePages } from './mount.js'
export {
  ConsoleForm,
  consoleProject,
  redirectToDefaultProject,
  requireConsoleOrg,
  requireConsoleSession,
  rolesHolding,
  stopWith,
  stopWithPage,
  type ConsoleProject,
  type ConsoleSession,
} from './session.js'
export { html, Raw } from '../pages.js'
