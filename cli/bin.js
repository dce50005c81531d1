#!/usr/bin/env node
// The CLI is written in TypeScript and run through tsx, so an installed `platform` needs no build step.
import { register } from 'tsx/esm/api'

register()
const { main } = await import('./main.ts')
process.exitCode = await main(process.argv)
