import { Timestamp } from '@google-cloud/firestore'
import { describe, expect, it } from 'vitest'
import type { Permission } from '../../../../lib/auth/roles.js'
import { projectRolesGrant } from '../../../../lib/auth/roles.js'
import { conflictWith, deny, invalid, missingPermission, orRefuse } from '../../../../lib/decision.js'
import {
  availableLabflowTransitions,
  GERMLINE,
  GERMLINE_V1,
  labflowProblems,
  startState,
  takeTransition,
  type LabflowContent,
} from '../../../../domain/clinical/labflows.js'

const at = Timestamp.fromMillis(Date.UTC(2026, 10, 22))
const lab = (p: Permission) => projectRolesGrant(['lab'], p)
const admin = (p: Permission) => projectRolesGrant(['admin'], p)
const state = (stage: string) => ({ ...startState(GERMLINE_V1, at, 'u1'), stage })
const ids = (def: LabflowContent, stage: string, can: (p: Permission) => boolean) =>
  availableLabflowTransitions(def, state(stage), can).map((t) => t.id)

describe('the default germline labflow', () => {
  it('is a valid definition: accessioning → extraction → library_prep → sequencing → primary_qc → delivered', () => {
    expect(labflowProblems(GERMLINE)).toEqual([])
    expect([...GERMLINE.stages].sort((a, b) => a.order - b.order).map((s) => s.key)).toEqual([
      'accessioning',
      'extraction',
      'library_prep',
      'sequencing',
      'primary_qc',
      'delivered',
    ])
  })

  it.each([
    ['accessioning', lab, ['advance-accessioning']],
    ['extraction', lab, ['advance-extraction', 'repeat-extraction']],
    ['library_prep', lab, ['advance-library_prep', 'repeat-library_prep', 'rework-library_prep-to-extraction']],
    ['sequencing', lab, ['advance-sequencing', 'repeat-sequencing', 'rework-sequencing-to-extraction', 'rework-sequencing-to-library_prep']],
    ['primary_qc', lab, ['complete-primary_qc', 'rework-primary_qc-to-extraction', 'rework-primary_qc-to-library_prep']],
    ['primary_qc', admin, ['complete-primary_qc', 'rework-primary_qc-to-extraction', 'rework-primary_qc-to-library_prep', 'remove-primary_qc']],
    ['delivered', admin, []],
  ] as const)('offers at %s: %j', (stage, can, expected) => {
    expect(ids(GERMLINE, stage, can)).toEqual(expected)
  })

  it('starts at the first stage, records each move, and ends on complete or remove', () => {
    const s0 = startState(GERMLINE_V1, at, 'u1')
    expect(s0).toMatchObject({ stage: 'accessioning', status: 'active', version: 1, history: [{ transition: 'start', by: 'u1' }] })
    const s1 = orRefuse(takeTransition(GERMLINE, s0, { transition: 'advance-accessioning', assignee: 'u2' }, lab, 'u1', at)).changes
    expect(s1.state).toMatchObject({ stage: 'extraction', assignee: 'u2' })
    expect(s1.entry).toEqual({ transition: 'advance-accessioning', from: 'accessioning', to: 'extraction', by: 'u1', at })
    const qc = { ...s1.state, stage: 'primary_qc' }
    const done = orRefuse(takeTransition(GERMLINE, qc, { transition: 'complete-primary_qc', assignee: null }, lab, 'u1', at)).changes
    expect(done.state).toMatchObject({ stage: 'delivered', status: 'completed' })
    expect(done.state.assignee).toBeUndefined()
    expect(takeTransition(GERMLINE, done.state, { transition: 'complete-primary_qc' }, lab, 'u1', at)).toEqual(
      deny(conflictWith("transition 'complete-primary_qc' cannot be taken (completed); allowed: none")),
    )
    const removed = orRefuse(takeTransition(GERMLINE, qc, { transition: 'remove-primary_qc', reason: 'withdrawn' }, admin, 'u1', at)).changes
    expect(removed.state).toMatchObject({ stage: 'primary_qc', status: 'removed' })
  })

  it.each([
    [
      'a transition from another stage: 409 naming the allowed ones',
      { transition: 'advance-sequencing' },
      conflictWith("transition 'advance-sequencing' cannot be taken at stage extraction; allowed: advance-extraction, repeat-extraction"),
    ],
    ['a transition beyond the permission: 403', { transition: 'remove-extraction', reason: 'x' }, missingPermission('order.cancel')],
    [
      'a transition without its needed reason: 400',
      { transition: 'repeat-extraction' },
      invalid("reason: transition 'repeat-extraction' requires a reason"),
    ],
  ])('refuses %s', (_, input, refusal) => {
    expect(takeTransition(GERMLINE, state('extraction'), input, lab, 'u', at)).toEqual(deny(refusal))
  })
})

describe('labflow definitions', () => {
  const stages = [
    { key: 'a', name: 'A', order: 1, assignee_roles: [] },
    { key: 'b', name: 'B', order: 2, assignee_roles: [] },
  ]
  it.each<[string, LabflowContent, string]>([
    ['no stages', { name: 'x', stages: [], transitions: [] }, 'stages: at least one stage'],
    ['a stage key twice', { name: 'x', stages: [stages[0]!, { ...stages[1]!, key: 'a' }], transitions: [] }, "'a' appears twice"],
    [
      'an unknown target',
      { name: 'x', stages, transitions: [{ id: 't', kind: 'advance', from: 'a', to: 'z', permission: 'labflow.move', requires_reason: false }] },
      "no stage 'z'",
    ],
    [
      'a remove with a target',
      { name: 'x', stages, transitions: [{ id: 't', kind: 'remove', from: 'a', to: 'b', permission: 'order.cancel', requires_reason: true }] },
      'no target',
    ],
    [
      'a repeat that moves',
      { name: 'x', stages, transitions: [{ id: 't', kind: 'repeat', from: 'a', to: 'b', permission: 'labflow.move', requires_reason: true }] },
      'stays at its stage',
    ],
    [
      'an unknown permission',
      {
        name: 'x',
        stages,
        transitions: [{ id: 't', kind: 'advance', from: 'a', to: 'b', permission: 'lab.magic' as Permission, requires_reason: false }],
      },
      "unknown permission 'lab.magic'",
    ],
  ])('refuses %s', (_, def, problem) => {
    expect(labflowProblems(def).join('; ')).toContain(problem)
  })
})
