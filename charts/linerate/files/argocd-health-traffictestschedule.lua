-- Argo CD health of a linerate.dev TrafficTestSchedule. Install it in argocd-cm as
--   resource.customizations.health.linerate.dev_TrafficTestSchedule
-- (the chart's README shows how). A schedule whose newest finished run passed (or that has not finished
-- one yet) is Healthy; one whose newest run did not pass, or whose schedule or template cannot be read or
-- planned, is Degraded:
-- the regression suite found something. A suspended schedule is Suspended.
local hs = { status = "Progressing", message = "waiting for the linerate operator" }
if obj.status == nil then
  return hs
end
local generation = obj.metadata.generation
local observed = obj.status.observedGeneration
if generation ~= nil and (observed == nil or observed < generation) then
  hs.message = "the operator has not yet seen this spec"
  return hs
end
local conditions = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local function status_of(t)
  if conditions[t] == nil then
    return nil
  end
  return conditions[t].status
end
local function message(t, default)
  if conditions[t] ~= nil and conditions[t].message ~= nil and conditions[t].message ~= "" then
    return conditions[t].message
  end
  return default
end
if status_of("Stalled") == "True" then
  hs.status = "Degraded"
  hs.message = message("Stalled", "the schedule or its template cannot be used")
elseif status_of("LastRunPassed") == "False" then
  hs.status = "Degraded"
  hs.message = message("LastRunPassed", "the newest run did not pass")
elseif obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = message("Ready", "suspended by spec.suspend")
elseif status_of("Ready") == "True" then
  hs.status = "Healthy"
  hs.message = message("LastRunPassed", message("Ready", "scheduled"))
end
return hs
