import { describe, expect, it } from 'vitest'
import { parseDeployPlan, shellWords } from '../../support/deploy-plan.js'

/** The reading of `infra/deploy.sh --dry-run` that the deployed-shape tier starts from (test/support/deploy-plan.ts). */
describe("reading the deploy's printed plan", () => {
  it.each([
    ['bare words', 'gcloud pubsub topics create run-requested --project=p', ['gcloud', 'pubsub', 'topics', 'create', 'run-requested', '--project=p']],
    [
      'a quoted word, as the script quotes one with <, > or spaces',
      "a '--push-endpoint=<url of x>/projects/p/topics/t' b",
      ['a', '--push-endpoint=<url of x>/projects/p/topics/t', 'b'],
    ],
    ["a quote inside a quoted word ('\\'')", "x 'it'\\''s' y", ['x', "it's", 'y']],
    ['a quoted part joined to a bare one', "--schedule='*/5 * * * *'", ['--schedule=*/5 * * * *']],
    ['an empty quoted word', "a '' b", ['a', '', 'b']],
  ])('splits %s', (_, line, words) => {
    expect(shellWords(line)).toEqual(words)
  })

  it('refuses an unterminated quote rather than guess', () => {
    expect(() => shellWords("a 'b c")).toThrow(/unterminated quote/)
  })

  it('reads the environment block, the functions with their entry points and secrets, the topics, the push subscriptions and the schedules', () => {
    const plan = parseDeployPlan(
      [
        '# Functions environment (/tmp/x/functions-env.yaml):',
        '#   ADMIN_PUBLIC_URL: "https://europe-west4-p.cloudfunctions.net/admin"',
        '#   LOG_LEVEL: "info"',
        '# == APIs ==',
        'gcloud pubsub topics create run-requested --project=p',
        'gcloud functions deploy run-requested --gen2 --runtime=nodejs22 --set-secrets=AUDIT_HMAC_KEYS=keys:latest,OIDC_CLIENT_SECRET=oidc:3 --entry-point=runRequested --trigger-http --no-allow-unauthenticated',
        "gcloud pubsub subscriptions create run-requested-push --project=p --topic=run-requested '--push-endpoint=<url of run-requested>/projects/p/topics/run-requested' --ack-deadline=600",
        'gcloud pubsub subscriptions create platform-dead-letter-hold --project=p --topic=platform-dead-letter',
        "gcloud scheduler jobs create http reconcile-schedule --location=r '--uri=<url of reconcile>' --http-method=POST '--message-body={}' --headers=Content-Type=application/json",
      ].join('\n'),
    )
    expect(plan.env).toEqual({ ADMIN_PUBLIC_URL: 'https://europe-west4-p.cloudfunctions.net/admin', LOG_LEVEL: 'info' })
    expect(plan.functions).toHaveLength(1)
    expect(plan.functions[0]).toMatchObject({ name: 'run-requested', entryPoint: 'runRequested' })
    expect(plan.functions[0]!.flags.get('--runtime')).toBe('nodejs22')
    expect(plan.functions[0]!.flags.has('--trigger-http')).toBe(true)
    expect([...plan.functions[0]!.secrets]).toEqual([
      ['AUDIT_HMAC_KEYS', 'keys'],
      ['OIDC_CLIENT_SECRET', 'oidc'],
    ])
    expect(plan.topics).toEqual(['run-requested'])
    expect(plan.pushes).toEqual([
      {
        subscription: 'run-requested-push',
        topic: 'run-requested',
        endpoint: '<url of run-requested>/projects/p/topics/run-requested',
        ackDeadlineSeconds: 600,
      },
    ])
    expect(plan.schedules).toEqual([
      { job: 'reconcile-schedule', uri: '<url of reconcile>', method: 'POST', body: '{}', headers: { 'Content-Type': 'application/json' } },
    ])
  })

  it('refuses a plan without its environment block', () => {
    expect(() => parseDeployPlan('# == APIs ==\n')).toThrow(/Functions environment/)
  })
})
