import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PubSub, type Message, type Subscription } from '@google-cloud/pubsub'
import type { Config } from '../../../lib/config.js'
import { testConfig } from '../../support/env.js'

/** Settings for the local suite's backends: the local executor and local bucket folders, under a fresh temporary folder. */
export async function localEnv(): Promise<Record<string, string>> {
  const root = await mkdtemp(join(tmpdir(), 'orchestrator-test-'))
  return { BATCH_BACKEND: 'local', LOCAL_WORK_ROOT: join(root, 'work'), STORAGE_BACKEND: 'local', LOCAL_STORAGE_ROOT: join(root, 'buckets') }
}

export async function localConfig(env: Record<string, string> = {}): Promise<Config> {
  return testConfig({ ...(await localEnv()), ...env })
}

export function pubsubFor(config: Config): PubSub {
  return new PubSub({ projectId: config.gcpProject, apiEndpoint: config.pubsubEmulatorHost, emulatorMode: true })
}

export interface Received {
  attributes: Record<string, string>
  data: string
}

/** Subscribes to a topic in the emulator and collects what arrives, to assert on what was published. */
export async function listen(pubsub: PubSub, topicName: string) {
  const [topic] = await pubsub.topic(topicName).get({ autoCreate: true })
  const [subscription] = await topic.createSubscription(`listen-${Math.random().toString(36).slice(2)}`)
  const received: Received[] = []
  const waiters: Array<() => void> = []
  subscription.on('message', (m: Message) => {
    received.push({ attributes: { ...m.attributes }, data: m.data.toString('utf8') })
    m.ack()
    waiters.splice(0).forEach((w) => w())
  })
  return {
    received,
    subscription: subscription as Subscription,
    async waitFor(pred: (all: Received[]) => boolean, timeoutMs = 15_000): Promise<Received[]> {
      const deadline = Date.now() + timeoutMs
      while (!pred(received)) {
        if (Date.now() > deadline) throw new Error(`timed out; received: ${JSON.stringify(received.map((r) => r.attributes))}`)
        await new Promise<void>((resolve) => {
          waiters.push(resolve)
          setTimeout(resolve, 200)
        })
      }
      return received
    },
    async close() {
      await subscription.close()
      await subscription.delete().catch(() => undefined)
    },
  }
}

export async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined && value !== false) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}
