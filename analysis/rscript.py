"""The BradleyTerry2 export: a data file and an R script that refits it as the dashboard's run did.

The data file has one row per valid judgment (the same judgments, in the same order, as the refit
reads: analysis.services.reading), with who was shown first, an anonymous participant number and the vignette, so the script
can fit the display-order effect (BTm's home-advantage coding, `~ system + first`), the
bias-reduced fit (`br = TRUE`) when the run used it, and the headline test (CR2 over vignettes with
clubSandwich, the participant design effect with `sandwich::vcovCL`, Satterthwaite df per system), as
`analysis.bradley_terry.headline_test`.
The script writes its numbers to `<slug>-bradleyterry2-results.csv` beside printing them, so
they can be compared with results.csv line by line.
"""

from __future__ import annotations

import json

from moraljudge.replica import reads_from_replica
from surveys.models import Judgment, Study

from .bradley_terry.headline_test import MIN_JUDGES, MIN_VIGNETTES
from .models import AnalysisRun
from .results.headline import MAX_SE
from .services.fitting import DEFAULT_PARAMETERS
from .services.reading import NO_SET

# Rows fetched per round trip when an export reads judgments (a server-side cursor on PostgreSQL).
CHUNK_ROWS = 2000

BT2_COLUMNS = ["question", "system1", "system2", "shown_first", "win1", "win2", "participant", "vignette", "set"]


@reads_from_replica
def bradleyterry2_rows(*, study: Study):
    """One row per valid judgment (the judgments the refit reads, per question in the study's
    order, then in judgment order): system1 before system2 in the study's system order,
    win1/win2 = 1/0 or 0/1, which of the two was shown first, participant, vignette and the vignette's set
    (empty when the study's vignettes are one set)."""
    order = {key: n for n, key in enumerate(study.systems.order_by("position", "id").values_list("key", flat=True))}
    questions = list(study.questions.order_by("position", "id").values_list("pk", "key"))
    judgments = (
        Judgment.objects.valid()
        .for_study(study)
        .order_by("id")
        .values_list(
            "question_id",
            "winner__system__key",
            "loser__system__key",
            "winner_position",
            "assignment__participant_id",
            "assignment__vignette__key",
            "assignment__vignette__set",
        )
    )
    numbers: dict[int, int] = {}  # participant id -> 1, 2, ... in order of first appearance
    sets = {name: name or NO_SET for name in study.vignettes.values_list("set", flat=True)}
    sets = sets if len(sets) > 1 else {}  # one set: the column stays empty
    for pk, key in questions:
        # One query per question rather than grouping in memory: rows stream as they are read.
        of_question = judgments.filter(question_id=pk).iterator(chunk_size=CHUNK_ROWS)
        for _, winner, loser, position, participant, vignette, vignette_set in of_question:
            first = winner if position == Judgment.Position.FIRST else loser  # as the refit reads it
            one, two = sorted((winner, loser), key=order.__getitem__)
            yield {
                "question": key,
                "system1": one,
                "system2": two,
                "shown_first": first,
                "win1": int(winner == one),
                "win2": int(winner == two),
                "participant": numbers.setdefault(participant, len(numbers) + 1),
                "vignette": vignette,
                "set": sets.get(vignette_set, vignette_set) if sets else "",
            }


def bradleyterry2_script(*, study: Study, run: AnalysisRun | None = None) -> str:
    """An R script that refits each question with BTm as `run` did (default: the latest finished
    run, else the default settings): reference, order effect, bias reduction."""
    if run is None:
        run = study.analysis_runs.filter(status=AnalysisRun.Status.DONE).order_by("-created_at", "-id").first()
    parameters = DEFAULT_PARAMETERS | (run.parameters if run else {})
    levels = list(study.systems.order_by("position", "id").values_list("key", flat=True))
    reference = study.reference_system.key if study.reference_system else levels[0]
    order_effect, bias_reduced = bool(parameters.get("order_effect")), bool(parameters.get("bias_reduced"))
    source = (
        f"as analysis run {run.pk} did (data hash {run.data_hash[:12]}: the same numbers while the judgments are unchanged)"
        if run
        else "with the default settings (no finished run yet)"
    )
    model = "bias-reduced (Firth) Bradley-Terry" if bias_reduced else "Bradley-Terry (maximum likelihood)"
    order_note = "with" if order_effect else "without (it is reported beside the estimates)"
    return _SCRIPT.format(
        slug=json.dumps(study.slug)[1:-1],
        source=source,
        model=model,
        reference=json.dumps(reference),
        order_note=order_note,
        levels=", ".join(json.dumps(level) for level in levels),
        order_effect="TRUE" if order_effect else "FALSE",
        bias_reduced="TRUE" if bias_reduced else "FALSE",
        min_vignettes=MIN_VIGNETTES,
        min_judges=MIN_JUDGES,
        max_se=MAX_SE,
    ) + _SETS_SCRIPT.format(
        slug=json.dumps(study.slug)[1:-1], sets=", ".join(json.dumps(name) for name in set_names(study))
    )


def set_names(study: Study) -> list[str]:
    """The study's vignette sets in its vignette order (the first is the baseline of the differences)."""
    names = [name or NO_SET for name in study.vignettes.order_by("position", "id").values_list("set", flat=True)]
    return list(dict.fromkeys(names))


# Written for R >= 3.5 with BradleyTerry2 (brglm for br = TRUE), sandwich and clubSandwich.
_SCRIPT = """# Refit MoralJudge study "{slug}" with BradleyTerry2 (Turner & Firth), {source}.
# Model: {model}, log-abilities relative to {reference}, {order_note} the display-order effect
# ("first": log-odds advantage of the answer shown first, BTm's home-advantage coding).
# Reproduces the dashboard's headline numbers per system: se, p, Holm p and 95% interval of the headline
# test on the maximum-likelihood fit: CR2 over vignettes (clubSandwich::vcovCR) times the participant design
# effect max(1, V_participant / V_participant x vignette) (sandwich::vcovCL, HC0), never below half the Wald SE, t with each system's
# Satterthwaite df (clubSandwich::coef_test). With fewer than {min_vignettes} vignettes or fewer than {min_judges} participants
# there is no test: p, Holm p and z are NA and the interval is the participant-clustered one (t with participants
# - 1 df; the Wald one with a single participant), narrower: column "interval" says which, "tested" whether.
# An SE above {max_se} (log-odds) is not estimable (NA). Also the estimate, the Wald se, p and interval
# (wald_*, conditional on these answers) and the order effect.
# Not reproduced: the bootstrap, split-half and style-controlled columns (resampling, covariates).
# Data: {slug}-bradleyterry2.csv, one row per valid judgment. Output: {slug}-bradleyterry2-results.csv
library(BradleyTerry2); suppressMessages(library(clubSandwich))
d <- read.csv("{slug}-bradleyterry2.csv", stringsAsFactors = FALSE)
systems <- c({levels})
reference <- {reference}
order_effect <- {order_effect}  # the dashboard's estimates include the order effect
bias_reduced <- {bias_reduced}  # BTm(..., br = TRUE), Firth's bias-reduced estimates
min_vignettes <- {min_vignettes}; min_judges <- {min_judges}; max_se <- {max_se}
exact <- glm.control(epsilon = 1e-12, maxit = 100)  # converge fully: R's default stops near 1e-8

refit <- function(dq, with_order, br = bias_reduced) {{
  formula <- if (with_order) ~ system + first else ~ system
  if (br) {{
    BTm(cbind(win1, win2), player1, player2, formula = formula, id = "system", refcat = reference,
        data = dq, br = TRUE, control.brglm = brglm::brglm.control(br.epsilon = 1e-12, br.maxit = 1000))
  }} else {{
    BTm(cbind(win1, win2), player1, player2, formula = formula, id = "system", refcat = reference,
        data = dq, control = exact)
  }}
}}

# The headline test: the maximum-likelihood fit as a glm (one row per judgment, X = e_system1 - e_system2
# without the reference, the order sign when the estimates include it), CR2 over vignettes, design effect.
headline <- function(dq, with_order) {{
  others <- setdiff(systems, reference)
  X <- sapply(others, function(k) (dq$system1 == k) - (dq$system2 == k))
  X <- matrix(X, nrow = nrow(dq), dimnames = list(NULL, others))
  if (with_order) X <- cbind(X, first = ifelse(dq$shown_first == dq$system1, 1, -1))
  y <- dq$win1
  g <- glm(y ~ 0 + X, family = binomial, control = exact)
  names(g$coefficients) <- colnames(X)
  n_vignettes <- length(unique(dq$vignette)); n_judges <- length(unique(dq$participant))
  estimate <- setNames(coef(g), colnames(X))
  if (n_vignettes < min_vignettes || n_judges < min_judges) {{
    if (n_judges >= 2) {{
      V <- sandwich::vcovCL(g, cluster = dq$participant, type = "HC0")
      df <- rep(n_judges - 1, ncol(X)); interval <- "judge_robust"
    }} else {{
      V <- vcov(g); df <- rep(NA_real_, ncol(X)); interval <- "wald"
    }}
    se <- suppressWarnings(sqrt(diag(V)))
    tested <- FALSE
  }} else {{
    V2 <- vcovCR(g, cluster = dq$vignette, type = "CR2")
    df <- coef_test(g, vcov = V2, test = "Satterthwaite")$df_Satt
    cell <- paste(dq$participant, dq$vignette)
    deff <- pmax(1, diag(sandwich::vcovCL(g, cluster = dq$participant, type = "HC0")) /
                    diag(sandwich::vcovCL(g, cluster = cell, type = "HC0")))
    se <- sqrt(pmax(deff * diag(as.matrix(V2)), 0.25 * diag(vcov(g))))  # never below half the Wald SE
    interval <- "cr2_vignette"; tested <- TRUE
  }}
  # A system judged on fewer than min_vignettes vignettes has no test either.
  seen <- sapply(colnames(X), function(k) length(unique(dq$vignette[dq$system1 == k | dq$system2 == k])))
  bad <- !is.finite(se) | se > max_se | se <= 0 | (tested & !(df >= 1)) | (tested & seen < min_vignettes)
  se[bad] <- NA; df[bad] <- NA
  list(se = setNames(se, colnames(X)), df = setNames(df, colnames(X)), estimate = estimate,
       interval = interval, tested = tested)
}}

rows <- list()
for (q in unique(d$question)) {{
  dq <- subset(d, question == q)
  dq$player1 <- data.frame(system = factor(dq$system1, levels = systems), first = as.numeric(dq$shown_first == dq$system1))
  dq$player2 <- data.frame(system = factor(dq$system2, levels = systems), first = as.numeric(dq$shown_first == dq$system2))
  fit <- refit(dq, order_effect)
  ordered <- if (order_effect) fit else refit(dq, TRUE)
  cf <- coef(summary(fit))
  names_fit <- sub("^system", "", rownames(cf))
  term <- ifelse(names_fit == "first", "order effect", "system")
  estimate <- cf[, 1]; wald_se <- cf[, 2]; wald_z <- cf[, 3]; wald_p <- cf[, 4]
  h <- headline(dq, order_effect)
  system <- term == "system"  # the order effect keeps its Wald numbers, as the dashboard shows it
  centre <- ifelse(system, h$estimate[names_fit], estimate)
  se <- ifelse(system, h$se[names_fit], wald_se)
  df <- ifelse(system, h$df[names_fit], NA)
  z <- ifelse(system, if (h$tested) centre / se else NA, wald_z)
  p <- ifelse(system, if (h$tested) 2 * pt(-abs(z), df = df) else NA, wald_p)
  p_holm <- rep(NA_real_, length(p))
  if (h$tested) p_holm[system] <- p.adjust(p[system], "holm")
  critical <- ifelse(system & !is.na(df), qt(0.975, pmax(df, 1)), qnorm(0.975))
  out <- data.frame(question = q, term = term, name = names_fit, estimate = estimate, se = se, z = z, p = p,
                    p_holm = p_holm, ci_low = centre - critical * se, ci_high = centre + critical * se,
                    interval = ifelse(system, h$interval, "wald"), df = df,
                    tested = system & h$tested,
                    wald_se = wald_se, wald_z = wald_z, wald_p = wald_p,
                    wald_ci_low = estimate - qnorm(0.975) * wald_se, wald_ci_high = estimate + qnorm(0.975) * wald_se,
                    stringsAsFactors = FALSE)
  if (!order_effect) {{
    oe <- coef(summary(ordered))["first", ]
    out <- rbind(out, data.frame(question = q, term = "order effect", name = "first", estimate = oe[1], se = oe[2],
                                 z = oe[3], p = oe[4], p_holm = NA, ci_low = oe[1] - qnorm(0.975) * oe[2],
                                 ci_high = oe[1] + qnorm(0.975) * oe[2], interval = "wald", df = NA, tested = FALSE,
                                 wald_se = oe[2], wald_z = oe[3], wald_p = oe[4], wald_ci_low = NA, wald_ci_high = NA))
  }}
  rownames(out) <- NULL
  cat("\\nQuestion:", q, "\\n")
  print(out[, -1], digits = 6)
  print(BTabilities(fit))  # every system's ability and Wald SE, the reference at 0
  rows[[q]] <- out
}}
write.csv(do.call(rbind, rows), "{slug}-bradleyterry2-results.csv", row.names = FALSE)
"""

# The results by vignette set (analysis/bradley_terry/sets.py): appended to every script, it does nothing when the
# study's vignettes are one set.
_SETS_SCRIPT = """
# ---- By vignette set: the interaction of system and set in BTm, and the headline test of each difference.
# Each non-reference system k gets one column per later set t, in_<t>_<k> (1 for k on a vignette of set t), so
# BTm(~ system + in_...) estimates k's ability in the first set (system) and its difference in set t (in_t_k):
# R's BTm(..., formula = ~ system[ID] + system[ID]:set) with the reference at 0 in every set. The test is the
# headline test (CR2 over vignettes with clubSandwich, the judge x vignette design effect, Satterthwaite df) over
# every set's abilities at once; Holm across the systems. Output: {slug}-bradleyterry2-sets.csv
sets <- c({sets})
set_rows <- list()
if (length(sets) > 1) for (q in unique(d$question)) {{
  dq <- subset(d, question == q)
  present <- sets[sets %in% dq$set]
  if (length(present) < 2) next
  others <- setdiff(systems, reference)
  player <- function(s) {{
    p <- data.frame(system = factor(s, levels = systems), first = as.numeric(dq$shown_first == s))
    for (k in others) for (t in present[-1]) p[[paste0("in_", t, "_", k)]] <- as.numeric(s == k & dq$set == t)
    for (t in present[-1]) p[[paste0("first_in_", t)]] <- p$first * (dq$set == t)
    p
  }}
  dq$player1 <- player(dq$system1); dq$player2 <- player(dq$system2)
  interaction <- as.vector(outer(present[-1], others, function(t, k) paste0("in_", t, "_", k)))
  orders <- if (order_effect) c("first", paste0("first_in_", present[-1])) else character(0)
  formula <- as.formula(paste("~ system +", paste(c(interaction, orders), collapse = " + ")))
  fit <- BTm(cbind(win1, win2), player1, player2, formula = formula, id = "system", refcat = reference,
             data = dq, control = exact)
  b <- coef(fit)
  # The same model with one column per set and system (the per-set abilities), for the sandwich.
  X <- NULL
  for (t in present) for (k in others) X <- cbind(X, ((dq$system1 == k) - (dq$system2 == k)) * (dq$set == t))
  colnames(X) <- as.vector(outer(others, present, function(k, t) paste(t, k)))
  if (order_effect) for (t in present) X <- cbind(X, ifelse(dq$shown_first == dq$system1, 1, -1) * (dq$set == t))
  joint <- glm(dq$win1 ~ 0 + X, family = binomial, control = exact)
  V2 <- clubSandwich::vcovCR(joint, cluster = dq$vignette, type = "CR2")
  cell <- paste(dq$participant, dq$vignette)
  deff <- pmax(1, diag(sandwich::vcovCL(joint, cluster = dq$participant, type = "HC0")) /
                  diag(sandwich::vcovCL(joint, cluster = cell, type = "HC0")))
  deff <- pmax(deff, 0.25 * diag(vcov(joint)) / diag(as.matrix(V2)))  # no SE below half the Wald SE
  for (t in present[-1]) {{
    vignettes_in <- sapply(c(present[1], t), function(u) length(unique(dq$vignette[dq$set == u])))
    judges_in <- length(unique(dq$participant[dq$set %in% c(present[1], t)]))
    out <- NULL
    for (k in others) {{
      estimate <- unname(b[paste0("in_", t, "_", k)])
      w <- numeric(ncol(X)); w[colnames(X) == paste(t, k)] <- 1; w[colnames(X) == paste(present[1], k)] <- -1
      lc <- clubSandwich::linear_contrast(joint, vcov = V2, contrasts = matrix(w * sqrt(deff), nrow = 1),
                                          test = "Satterthwaite")
      se <- lc$SE; df <- lc$df
      if (min(vignettes_in) < min_vignettes || judges_in < 2 || !is.finite(se) || se <= 0 || df < 1) {{
        se <- NA; df <- NA
      }}
      p <- 2 * pt(-abs(estimate / se), df)
      out <- rbind(out, data.frame(question = q, system = k, set = t, compared_with = present[1], estimate = estimate,
                                   se = se, df = df, p = p, ci_low = estimate - qt(0.975, df) * se,
                                   ci_high = estimate + qt(0.975, df) * se, stringsAsFactors = FALSE))
    }}
    out$p_holm <- NA_real_
    tested <- !is.na(out$p)
    out$p_holm[tested] <- p.adjust(out$p[tested], "holm")
    cat("\\nQuestion:", q, "- each system's difference", t, "minus", present[1], "\\n")
    print(out[, -1], digits = 6)
    set_rows[[paste(q, t)]] <- out
  }}
}}
if (length(set_rows)) write.csv(do.call(rbind, set_rows), "{slug}-bradleyterry2-sets.csv", row.names = FALSE)
"""
