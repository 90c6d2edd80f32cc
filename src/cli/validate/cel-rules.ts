// The CEL rules of our CRDs (`x-kubernetes-validations`) run on the project's budgeted CEL
// (controllers/common/cel.ts: a cost meter, RE2 for `matches`), as the API server runs them with
// its own limits: a cost limit per expression and one for all the rules of an object. A rule the
// library cannot compile (a Kubernetes CEL library it lacks, such as quantity() or url()) is not
// an error in the manifest: the validator reports it once as "cannot check rule …".
import { BudgetedCel, CEL_COST_LIMIT, firstLine, jsonBound } from '../../controllers/common/cel.js'
import type { RuleEvaluator, RuleOutcome } from '../../k8s/schema-validation.js'

/**
 * What all the rules of one object may cost together: ten expressions at their limit (the API
 * server gives an object ten times its per-expression limit, too).
 */
export const OBJECT_RULES_BUDGET = 10 * CEL_COST_LIMIT

const LIMITS = { maxAstNodes: 1000, maxDepth: 32, maxListElements: 1000, maxMapEntries: 1000, maxCallArguments: 32 }

/** A RuleEvaluator over `self`; compile results are kept per expression. */
export function celRuleEvaluator (): RuleEvaluator {
  // The estimate reads `self` as small: the meter, not the estimate, holds the limit here.
  const cel = new BudgetedCel({ limits: LIMITS, variables: { self: { type: 'dyn', bound: jsonBound(0) } } })
  const problems = new Map<string, string | undefined>()
  const problemOf = (expression: string): string | undefined => {
    if (!problems.has(expression)) {
      const problem = cel.check(expression).problem
      problems.set(expression, problem?.startsWith('costs an estimated') === true ? undefined : problem)
    }
    return problems.get(expression)
  }
  return {
    objectBudget: OBJECT_RULES_BUDGET,
    evaluate (expression: string, self: unknown, budget: number): RuleOutcome {
      const problem = problemOf(expression)
      if (problem !== undefined) return { cannotCheck: problem }
      const result = cel.evaluate(expression, { self }, Math.min(budget, CEL_COST_LIMIT))
      return result.ok
        ? { ok: true, value: result.value, cost: result.cost }
        : { ok: false, error: firstLine(result.error), overLimit: result.overLimit, cost: result.cost }
    }
  }
}
