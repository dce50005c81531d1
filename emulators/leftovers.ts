import { execFileSync } from 'node:child_process'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { exportFirestore, type Layout } from './data-dir.js'
import { groupGone } from './processes.js'

/**
 * The emulators of a suite that did not stop cleanly. The suite's emulators run in process groups
 * of their own and write to log files, so a crash of the suite (kill -9, an out-of-memory kill, a
 * closed terminal) leaves them running with everything they had committed. emulators.json in the
 * data folder names them from the moment they are spawned until they are stopped; the next start
 * on that folder exports the leftover Firestore emulator's data (which becomes the data it
 * imports), then stops both leftovers.
 */

export type EmulatorKind = 'firestore' | 'pubsub'

export interface EmulatorRecord {
  kind: EmulatorKind
  /** The spawned process's pid, which is also its process group's id. */
  pid: number
  /** 127.0.0.1:<port> */
  host: string
}

export interface EmulatorsFile {
  /** The suite process that started them. */
  suite_pid: number
  emulators: EmulatorRecord[]
}

export function readEmulatorsFile(l: Layout): EmulatorsFile | undefined {
  try {
    return JSON.parse(readFileSync(l.emulatorsFile, 'utf8')) as EmulatorsFile
  } catch {
    return undefined
  }
}

/** Adds an emulator to emulators.json; synchronous, so that it is on disk before anything can crash. */
export function recordEmulator(l: Layout, record: EmulatorRecord) {
  const current = readEmulatorsFile(l)
  const file: EmulatorsFile = {
    suite_pid: process.pid,
    emulators: [...(current?.suite_pid === process.pid ? current.emulators.filter((e) => e.kind !== record.kind) : []), record],
  }
  writeFileSync(l.emulatorsFile, JSON.stringify(file, null, 2) + '\n')
}

export function forgetEmulators(l: Layout) {
  rmSync(l.emulatorsFile, { force: true })
}

/**
 * The live processes of an emulator's group, if the group is still that emulator: its pid may have
 * gone to another process since, so a group counts only when one of its processes is an emulator
 * listening where the record says.
 */
export function emulatorGroup(record: EmulatorRecord): number[] {
  const port = record.host.split(':').pop()
  let table: string
  try {
    table = execFileSync('ps', ['-eo', 'pid=,pgid=,args='], { encoding: 'utf8' })
  } catch {
    return []
  }
  const members = table
    .split('\n')
    .map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null && Number(m[2]) === record.pid)
  const isEmulator = members.some((m) => m[3]!.includes(`--port=${port}`) && /firestore|pubsub/i.test(m[3]!))
  return isEmulator ? members.map((m) => Number(m[1])) : []
}

/** SIGKILL: what a leftover holds is exported already or lost with it, and a JVM takes seconds to stop on SIGTERM. */
async function stopGroup(pgid: number) {
  try {
    process.kill(-pgid, 'SIGKILL')
  } catch {
    return
  }
  await groupGone(pgid, 10_000)
}

export interface LeftoverReport {
  /** The suite process that had started them. */
  suitePid: number
  /** The emulators still running, by kind. */
  found: EmulatorKind[]
  /** The leftover Firestore emulator's data was exported and will be imported. */
  exported: boolean
  /** Why the export failed, when it did (the last periodic export is imported instead). */
  exportError?: string
}

/**
 * Takes over what a suite that crashed on this data folder left running. Call only with the
 * folder's lock held (the previous suite is gone). With `exportData`, the leftover Firestore
 * emulator's data is exported first; --clean skips that. Returns undefined when nothing was recorded.
 */
export async function takeOverLeftovers(l: Layout, opts: { exportData: boolean; gcpProject: string }): Promise<LeftoverReport | undefined> {
  const file = readEmulatorsFile(l)
  if (!file) return undefined
  const report: LeftoverReport = { suitePid: file.suite_pid, found: [], exported: false }
  const live = file.emulators.filter((e) => emulatorGroup(e).length > 0)
  report.found = live.map((e) => e.kind)
  const firestore = live.find((e) => e.kind === 'firestore')
  if (firestore && opts.exportData) {
    try {
      await exportFirestore(l, firestore.host, opts.gcpProject)
      report.exported = true
    } catch (err) {
      report.exportError = err instanceof Error ? err.message : String(err)
    }
  }
  await Promise.all(live.map((e) => stopGroup(e.pid)))
  forgetEmulators(l)
  return report
}
