#!/usr/bin/env node
// The CLI is written in TypeScript and run through tsx, so an installed `platform` needs no build step.
import { register } from 'tsx/esm/api'

// The CLI's own sources need no tsconfig; a tsconfig.json in the user's current folder must not change them.
register({ tsconfig: false })
const { main } = await import('./main.ts')
process.exitCode = await main(process.argv)
