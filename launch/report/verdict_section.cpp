#include "launch/report/verdict_section.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "launch/report/format.h"
#include "launch/report/run_warnings.h"
#include "launch/report/table.h"

namespace dtbench {

namespace {

// The distinct values of `field` over the runs, in order of appearance, joined; "" if none known.
template <typename Field>
std::string distinct(const std::vector<RunRecord>& runs, Field field) {
  std::vector<std::string> values;
  for (const auto& run : runs) {
    std::string value = field(run);
    if (!value.empty() && std::find(values.begin(), values.end(), value) == values.end()) values.push_back(value);
  }
  return fmt::format("{}", fmt::join(values, "; "));
}

std::string model_text(const RunRecord& run) {
  const RunContext& c = run.context;
  if (c.model.empty()) return "";
  if (c.parameters <= 0) return c.model;
  return fmt::format("{} ({} parameters, a {} gradient)", c.model, c.parameters, bytes_text(4.0 * c.parameters));
}

std::string batch_text(const std::vector<RunRecord>& runs) {
  const std::string per_worker = distinct(runs, [](const RunRecord& r) {
    return r.context.batch > 0 ? std::to_string(r.context.batch) : std::string();
  });
  const std::string global = distinct(runs, [](const RunRecord& r) {
    return r.context.batch > 0 ? fmt::format("{} ({} x {})", r.context.batch * r.world, r.world, r.context.batch) : std::string();
  });
  return per_worker.empty() ? "" : fmt::format("{} per worker; global {}", per_worker, global);
}

std::string data_text(const RunRecord& run) {
  const RunContext& c = run.context;
  if (c.data_path.empty()) return "";
  return fmt::format("{} ({}{})", c.data_path, c.data_format.empty() ? "" : c.data_format + ", ",
                     c.synthetic ? "SYNTHETIC" : "real");
}

std::string hosts_text(const std::vector<RunRecord>& runs) {
  std::set<std::string> hosts;
  for (const auto& run : runs) hosts.insert(run.context.hosts.begin(), run.context.hosts.end());
  if (hosts.empty()) return "";
  if (hosts.size() == 1) return fmt::format("1 host ({}): every worker on one machine", *hosts.begin());
  std::set<std::string> links;
  for (const auto& run : runs) {
    if (!run.context.link.empty()) links.insert(run.context.link);
  }
  if (links.empty()) return fmt::format("{} hosts ({}); the link between them is not recorded", hosts.size(), fmt::join(hosts, ", "));
  return fmt::format("{} hosts ({}); emulated cluster, link {} each way", hosts.size(), fmt::join(hosts, ", "),
                     fmt::join(links, ", "));
}

std::vector<std::pair<std::string, std::string>> provenance_header(const std::vector<RunRecord>& runs) {
  const std::vector<std::pair<std::string, std::string>> all = {
      {"Model", distinct(runs, model_text)},
      {"Batch", batch_text(runs)},
      {"Data", distinct(runs, data_text)},
      {"Hosts", hosts_text(runs)},
      {"Cores", distinct(runs, [](const RunRecord& r) {
         return r.context.cores > 0 ? fmt::format("{} ({})", r.context.cores, r.context.cpu_model) : std::string();
       })},
      {"Threads", distinct(runs, [](const RunRecord& r) {
         return r.context.threads > 0 ? fmt::format("{} BLAS thread(s) per worker", r.context.threads) : std::string();
       })},
      {"BLAS core", distinct(runs, [](const RunRecord& r) { return r.context.blas_core; })},
      {"PyTorch", distinct(runs, [](const RunRecord& r) { return r.context.torch_settings; })},
      {"Device", distinct(runs, [](const RunRecord& r) { return r.context.device; })},
      {"Precision", distinct(runs, [](const RunRecord& r) { return r.context.precision; })},
      {"Convolutions", distinct(runs, [](const RunRecord& r) { return r.context.conv_algorithms; })},
      {"Commit", distinct(runs, [](const RunRecord& r) { return r.context.commit; })},
  };
  std::vector<std::pair<std::string, std::string>> known;
  std::copy_if(all.begin(), all.end(), std::back_inserter(known), [](const auto& kv) { return !kv.second.empty(); });
  return known;
}

// Each run's warnings; a kind that several runs share is said once, with how many and an example.
std::vector<std::string> grouped_warnings(const std::vector<RunRecord>& runs) {
  std::vector<std::string> kinds;
  std::map<std::string, std::vector<std::string>> texts;  // kind -> "run: text"
  for (const auto& run : runs) {
    std::vector<RunWarning> warnings = run_warnings(run);
    if (!run.complete()) warnings.insert(warnings.begin(), {"incomplete", "the run did not complete; it is not in the verdict"});
    for (const auto& w : warnings) {
      if (!texts.contains(w.kind)) kinds.push_back(w.kind);
      texts[w.kind].push_back(runs.size() == 1 ? w.line() : fmt::format("{}: {}", run.name, w.text));
    }
  }
  std::vector<std::string> out;
  for (const auto& kind : kinds) {
    const auto& all = texts[kind];
    if (all.size() <= 2) {
      for (const auto& text : all) out.push_back(runs.size() == 1 ? text : kind + " (" + text + ")");
    } else {
      out.push_back(fmt::format("{} in {} of {} runs, e.g. {}", kind, all.size(), runs.size(), all.front()));
    }
  }
  return out;
}

}  // namespace

ReportSummary summarize_runs(const std::vector<RunRecord>& runs, const std::vector<double>& targets,
                             const std::vector<std::string>& labels, const std::vector<std::string>& workloads) {
  ReportSummary summary;
  summary.header = provenance_header(runs);
  std::vector<std::string> order;
  std::map<std::string, std::vector<VerdictRun>> by_workload;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].complete() || runs[i].epochs.empty()) continue;  // an incomplete run's figures stop short
    const std::string workload = i < workloads.size() ? workloads[i] : "";
    if (!by_workload.contains(workload)) order.push_back(workload);
    by_workload[workload].push_back(verdict_run(runs[i], targets, i < labels.size() ? labels[i] : ""));
  }
  for (const auto& workload : order) summary.verdicts.push_back({workload, reach_verdict(by_workload[workload], targets)});
  summary.warnings = grouped_warnings(runs);
  for (const auto& [workload, verdict] : summary.verdicts) {
    for (const auto& caution : verdict.cautions) {
      summary.warnings.push_back(workload.empty() ? caution : workload + ": " + caution);
    }
  }
  return summary;
}

std::string summary_markdown(const ReportSummary& s) {
  std::string out;
  for (const auto& [key, value] : s.header) out += fmt::format("- **{}:** {}\n", key, value);
  out += "\n## Verdict\n\n";
  if (s.verdicts.empty()) out += "No complete run to judge.\n";
  for (const auto& [workload, verdict] : s.verdicts) {
    if (!workload.empty()) out += fmt::format("\n**{}**\n\n", workload);
    for (const auto& finding : verdict.findings) out += fmt::format("- {}\n", finding);
  }
  if (!s.warnings.empty()) out += "\n**Warnings**\n\n";
  for (const auto& warning : s.warnings) out += fmt::format("- ⚠ {}\n", warning);
  return out + "\n";
}

std::string summary_html(const ReportSummary& s) {
  std::string out = "<dl class=\"provenance\">\n";
  for (const auto& [key, value] : s.header) {
    out += fmt::format("<dt>{}</dt><dd>{}</dd>\n", escape_xml(key), escape_xml(value));
  }
  out += "</dl>\n<div class=\"verdict\">\n<h2>Verdict</h2>\n";
  if (s.verdicts.empty()) out += "<p>No complete run to judge.</p>\n";
  for (const auto& [workload, verdict] : s.verdicts) {
    if (!workload.empty()) out += "<h3>" + escape_xml(workload) + "</h3>\n";
    out += "<ul>\n";
    for (size_t i = 0; i < verdict.findings.size(); ++i) {
      out += fmt::format("<li{}>{}</li>\n", i == 0 ? " class=\"answer\"" : "", escape_xml(verdict.findings[i]));
    }
    out += "</ul>\n";
  }
  out += "</div>\n";
  if (s.warnings.empty()) return out;
  out += "<div class=\"warnings\"><strong>Warnings</strong>\n<ul>\n";
  for (const auto& warning : s.warnings) out += "<li>" + escape_xml(warning) + "</li>\n";
  return out + "</ul>\n</div>\n";
}

std::string warnings_text(const std::vector<std::string>& warnings) {
  std::string out;
  for (const auto& warning : warnings) out += fmt::format("warning: {}\n", warning);
  return out;
}

}  // namespace dtbench
