import { describe, expect, it } from 'vitest'
import { apiFiles, staleFiles } from '../../../scripts/openapi.js'

describe("the CLI's copy of the API (cli/api/)", () => {
  it('is byte for byte what npm run generate makes from the services as they are now', async () => {
    // When this fails, a route, schema or service definition changed: run `npm run generate` and commit cli/api/.
    expect(staleFiles(await apiFiles())).toEqual([])
  })
})
