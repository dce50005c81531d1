import type { Server } from 'node:http'
import type { PubSub } from '@google-cloud/pubsub'
import type { Config } from '../lib/config.js'
import { isAlreadyExists } from '../lib/errors.js'
import type { Logger } from '../lib/log.js'
import { ORCHESTRATOR_FUNCTIONS } from '../orchestrator/function-list.js'

/**
 * The orchestrator's functions hosted as in the cloud: each registered functions-framework
 * function on its own local port, each CloudEvent function fed by a Pub/Sub push subscription on
 * its topic (the emulator delivers them as Cloud Pub/Sub does), and the reconciler called over
 * HTTP on a schedule, as Cloud Scheduler would (once the caller starts it: scheduleReconcile).
 */

export const FUNCTION_NAMES = ORCHESTRATOR_FUNCTIONS.map((f) => f.name)
/** The local suite's cadence for the reconciler (Cloud Scheduler's in infra/ is RECONCILE_SCHEDULE). */
export const RECONCILE_EVERY_MS = 30_000
/** Passes run back to back while the previous one reports work left, at most this many before waiting for the next tick. */
const MAX_CHAINED_PASSES = 20
const ACK_DEADLINE_SECONDS = 60

export const subscriptionName = (topic: string, fn: string) => `${topic}--${fn}`

/**
 * The functions-framework reads the topic from the push endpoint's path
 * (/projects/<project>/topics/<topic>) when it turns a raw push request into a CloudEvent.
 */
export const pushEndpoint = (url: string, config: Config, topic: string) => `${url}/projects/${config.gcpProject}/topics/${topic}`

async function ignoreExisting(create: () => Promise<unknown>) {
  try {
    await create()
    return true
  } catch (err) {
    if (!isAlreadyExists(err)) throw err
    return false
  }
}

export async function ensureTopics(pubsub: PubSub, names: string[]) {
  for (const name of names) await ignoreExisting(() => pubsub.createTopic(name))
}

/** A push subscription to `endpoint`; one kept from a previous start (another --base-port, say) is pointed at it again. */
export async function ensurePushSubscription(pubsub: PubSub, topic: string, name: string, endpoint: string) {
  const created = await ignoreExisting(() =>
    pubsub.topic(topic).createSubscription(name, { pushConfig: { pushEndpoint: endpoint }, ackDeadlineSeconds: ACK_DEADLINE_SECONDS }),
  )
  if (!created) await pubsub.subscription(name).modifyPushConfig({ pushEndpoint: endpoint })
}

export interface HostedFunctions {
  urls: Record<string, string>
  /**
   * Calls the reconciler now and then every RECONCILE_EVERY_MS, as Cloud Scheduler would, with
   * `body` as the request's JSON. A pass is never started while one is running, and a pass that
   * reports runs left (its time budget ran out) is followed at once by another.
   */
  scheduleReconcile(body?: Record<string, unknown>): void
  /** Stops the schedule and closes the servers. */
  stop(): Promise<void>
}

/**
 * Serves every function of ORCHESTRATOR_FUNCTIONS, which must already be registered with the
 * functions-framework (registerOrchestrator), on the given ports, then wires their triggers.
 */
export async function hostFunctions(opts: {
  config: Config
  pubsub: PubSub
  ports: Record<string, number>
  log: Logger
  listen(server: Server, port: number, what: string): Promise<void>
  close(server: Server): Promise<void>
}): Promise<HostedFunctions> {
  const servers: Server[] = []
  const urls: Record<string, string> = {}
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const stop = async () => {
    stopped = true
    if (timer) clearInterval(timer)
    await Promise.all(servers.splice(0).map((s) => opts.close(s)))
  }

  let passing = false
  /** One reconcile call; true when it reports runs left for another pass. */
  const pass = async (url: string, body: Record<string, unknown>): Promise<boolean> => {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    if (!res.ok) {
      opts.log.warn('scheduled reconcile failed', { status: res.status, body: await res.text() })
      return false
    }
    const report = (await res.json()) as { remaining?: Record<string, number> }
    return Object.values(report.remaining ?? {}).some((n) => n > 0)
  }
  const tick = async (url: string, body: Record<string, unknown>) => {
    if (passing || stopped) return
    passing = true
    try {
      let more = true
      for (let i = 0; more && i < MAX_CHAINED_PASSES && !stopped; i++) more = await pass(url, body)
    } catch (err) {
      if (!stopped) opts.log.warn('scheduled reconcile failed', { error: err })
    } finally {
      passing = false
    }
  }
  const scheduleReconcile = (body: Record<string, unknown> = {}) => {
    const url = urls.reconcile
    if (!url || timer || stopped) return
    void tick(url, body)
    timer = setInterval(() => void tick(url, body), RECONCILE_EVERY_MS)
    timer.unref()
  }
  try {
    // Loaded here, not at the top: the suite's main thread imports this module for its names and
    // topics, and must not load the framework (see functions-thread.ts).
    const { getTestServer } = await import('@google-cloud/functions-framework/testing')
    for (const fn of ORCHESTRATOR_FUNCTIONS) {
      const port = opts.ports[fn.name]
      if (port === undefined) throw new Error(`no port for the function ${fn.name}`)
      const server = getTestServer(fn.name)
      await opts.listen(server, port, `the ${fn.name} function`)
      servers.push(server)
      urls[fn.name] = `http://127.0.0.1:${port}`
    }
    for (const fn of ORCHESTRATOR_FUNCTIONS) {
      if (fn.kind !== 'cloudevent') continue
      const topic = fn.topic(opts.config)
      await ensurePushSubscription(opts.pubsub, topic, subscriptionName(topic, fn.name), pushEndpoint(urls[fn.name]!, opts.config, topic))
    }
    return { urls, scheduleReconcile, stop }
  } catch (err) {
    await stop()
    throw err
  }
}
