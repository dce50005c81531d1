import { defineService, serviceApp } from '../../lib/service.js'
import { filesDeps, type FilesDeps } from './deps.js'
import { files } from './routes/files.js'
import { seedDemoFastq } from './seed.js'

/** The file service: a project's bucket, listed, copied, moved, deleted, and signed addresses to upload and download. */
export const filesService = defineService<FilesDeps>({
  name: 'files',
  title: 'File service',
  description:
    "Files in the project's bucket: one-level listing, copy, move, delete, and signed V4 addresses (valid 900 s, used without an Authorization header) to download and upload. Every request needs X-Project-ID.",
  port: 8104,
  projectScoped: true,
  collections: [],
  tags: [
    {
      name: 'files',
      description: "The project's bucket: one-level listing, signed download and upload addresses (V4, 900 s), copy, move and delete",
    },
  ],
  deps: (kernel) => filesDeps(kernel),
  routes: [files],
  seed: seedDemoFastq,
})

export const createFilesApp = (deps: FilesDeps) => serviceApp(filesService.definition, deps)
