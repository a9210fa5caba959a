-- Argo CD health of a linerate.dev TrafficTest, from the conditions the operator keeps for kstatus
-- (Ready, Reconciling, Stalled). Install it in argocd-cm as
--   resource.customizations.health.linerate.dev_TrafficTest
-- (the chart's README shows how). A run that passed, or has no expectations, is Healthy; one that
-- failed, missed its expectations or could not decide them is Degraded; a suspended one is Suspended;
-- anything on its way is Progressing.
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
local function is_true(t)
  return conditions[t] ~= nil and conditions[t].status == "True"
end
local function message(t, default)
  if conditions[t] ~= nil and conditions[t].message ~= nil and conditions[t].message ~= "" then
    return conditions[t].message
  end
  return default
end
if obj.status.phase == "Suspended" then
  hs.status = "Suspended"
  hs.message = message("Ready", "suspended by spec.suspend")
elseif is_true("Stalled") then
  hs.status = "Degraded"
  hs.message = message("Stalled", "the run cannot go on")
elseif is_true("Ready") then
  hs.status = "Healthy"
  hs.message = message("Ready", "measured")
elseif is_true("Reconciling") then
  hs.message = message("Reconciling", "running")
end
return hs
