/** `npm run docs:cli`: writes the CLI reference (docs/cli/reference/*.md) from the CLI's command tree, removing pages of commands that no longer exist. */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { REFERENCE_DIR, referencePages } from '../cli/reference.js'

const dir = resolve(import.meta.dirname, '..', REFERENCE_DIR)
mkdirSync(dir, { recursive: true })
const pages = referencePages()
for (const name of readdirSync(dir)) if (name.endsWith('.md') && !pages.has(name)) rmSync(join(dir, name))
for (const [name, text] of pages) writeFileSync(join(dir, name), text)
console.log(`wrote ${pages.size} pages to ${REFERENCE_DIR}`)
