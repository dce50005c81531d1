import { ExecutionsClient, type protos } from '@google-cloud/workflows'

/**
 * Cloud Workflows behind one small port: start an execution of a deployed workflow with an
 * argument. The platform runs a variant ingestion's steps this way in the cloud (each step a call
 * of a private function, with the workflow's retries and an execution record); the local suite
 * runs the same steps in its own process instead (domain/variants/runner.ts).
 */
type ICreateExecutionRequest = protos.google.cloud.workflows.executions.v1.ICreateExecutionRequest

export interface WorkflowExecutions {
  /** Starts `workflow` (projects/<p>/locations/<r>/workflows/<id>) with `argument` (JSON); answers the execution's name. */
  start(workflow: string, argument: Record<string, unknown>, labels?: Record<string, string>): Promise<{ name: string }>
}

/** The one call the platform makes, at the gRPC client's boundary (tests script it). */
export interface ExecutionsRpc {
  createExecution(req: ICreateExecutionRequest): Promise<{ name?: string | null }>
}

export function executionsRpcOf(client: ExecutionsClient): ExecutionsRpc {
  return { createExecution: async (req) => (await client.createExecution(req))[0] }
}

/** Label values as Google Cloud accepts them: lowercase letters, digits, _ and -, at most 63 characters. */
const labelValue = (v: string) =>
  v
    .toLowerCase()
    .replace(/[^a-z0-9_-]/g, '-')
    .slice(0, 63)

/**
 * The request that starts an execution, exactly: the argument is the workflow's `args` as a JSON
 * string, call logging only for errors (steps log themselves), labels to find the execution by.
 */
export function createExecutionRequest(
  workflow: string,
  argument: Record<string, unknown>,
  labels: Record<string, string> = {},
): ICreateExecutionRequest {
  return {
    parent: workflow,
    execution: {
      argument: JSON.stringify(argument),
      callLogLevel: 'LOG_ERRORS_ONLY',
      labels: Object.fromEntries(Object.entries(labels).map(([k, v]) => [labelValue(k), labelValue(v)])),
    },
  }
}

export class CloudWorkflowExecutions implements WorkflowExecutions {
  constructor(private readonly rpc: ExecutionsRpc) {}

  async start(workflow: string, argument: Record<string, unknown>, labels: Record<string, string> = {}) {
    const execution = await this.rpc.createExecution(createExecutionRequest(workflow, argument, labels))
    if (!execution.name) throw new Error(`Cloud Workflows started an execution of ${workflow} without a name`)
    return { name: execution.name }
  }
}

/** Cloud Workflows through @google-cloud/workflows, as the function's runtime identity (roles/workflows.invoker). */
export function createWorkflowExecutions(): WorkflowExecutions {
  let client: ExecutionsClient | undefined
  return {
    start: (workflow, argument, labels) => {
      client ??= new ExecutionsClient()
      return new CloudWorkflowExecutions(executionsRpcOf(client)).start(workflow, argument, labels)
    },
  }
}
