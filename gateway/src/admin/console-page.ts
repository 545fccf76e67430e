/**
 * The admin console (docs/architecture.md, Admin API): one static page driving the admin JSON API
 * with the token the operator types in (their operator token, or ADMIN_TOKEN in local mode; kept in
 * sessionStorage, never in the page). Sections: operators, shops and API keys, webhooks and
 * deliveries, balances and adjustments, operations and the manual-check queue, late funds, routes. Every answer is shown as text (textContent), so nothing from the API
 * is ever rendered as HTML.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Payment gateway admin</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:64rem}input,select,button{font:inherit;margin:.2rem}
pre{background:#f4f4f4;padding:.6rem;overflow:auto;max-height:30rem}fieldset{margin:.8rem 0}</style></head>
<body><h1>Payment gateway admin</h1>
<fieldset><legend>Sign in</legend><input id="token" type="password" size="56" placeholder="operator token (ADMIN_TOKEN in local mode)">
<button onclick="sessionStorage.token=v('token')">Use</button></fieldset>
<fieldset><legend>Operators</legend>
<input id="opname" placeholder="operator name"><button onclick="call('POST','/admin/api/operators',{name:v('opname')})">Create operator</button>
<button onclick="call('GET','/admin/api/operators')">List</button>
<input id="opid" placeholder="operator id" size="38"><button onclick="call('POST','/admin/api/operators/'+v('opid')+'/token',{})">New token</button>
<button onclick="call('POST','/admin/api/operators/'+v('opid')+'/revoke',{})">Revoke</button></fieldset>
<fieldset><legend>Merchants and shops</legend>
<input id="mname" placeholder="merchant name"><button onclick="call('POST','/admin/api/merchants',{name:v('mname')})">Create merchant</button><br>
<input id="mid" placeholder="merchant id" size="38"><input id="sname" placeholder="shop name"><input id="hook" placeholder="webhook URL (https)">
<label><input id="checkout" type="checkbox"> checkout</label>
<button onclick="call('POST','/admin/api/shops',{merchant_id:v('mid'),name:v('sname'),checkout_enabled:document.getElementById('checkout').checked,webhook_url:v('hook')||undefined})">Create shop</button></fieldset>
<fieldset><legend>Shop</legend><input id="sid" placeholder="shop id" size="38">
<button onclick="call('GET','/admin/api/shops/'+v('sid'))">Show</button>
<button onclick="call('GET','/admin/api/shops/'+v('sid')+'/balances')">Balances</button>
<button onclick="call('GET','/admin/api/operations?shop_id='+v('sid'))">Operations</button><br>
API keys: <input id="label" placeholder="label"><button onclick="call('POST','/admin/api/shops/'+v('sid')+'/api-keys',{label:v('label')})">Issue key</button>
<button onclick="call('GET','/admin/api/shops/'+v('sid')+'/api-keys')">List keys</button>
<input id="kid" placeholder="api key id" size="38"><button onclick="call('POST','/admin/api/api-keys/'+v('kid')+'/revoke',{})">Revoke key</button><br>
Webhooks: <button onclick="call('POST','/admin/api/shops/'+v('sid')+'/webhook-secret',{})">Rotate secret</button>
<button onclick="call('GET','/admin/api/shops/'+v('sid')+'/webhook-deliveries')">Deliveries</button>
<input id="did" placeholder="delivery id" size="38"><button onclick="call('POST','/admin/api/webhook-deliveries/'+v('did')+'/redeliver',{})">Redeliver</button><br>
Adjustment: <select id="cur"><option>RUB</option><option>USDT</option></select><input id="amt" placeholder="±amount" size="10"><input id="why" placeholder="reason">
<button onclick="call('POST','/admin/api/shops/'+v('sid')+'/adjustments',{currency:v('cur'),amount:v('amt'),reason:v('why')})">Post</button></fieldset>
<fieldset><legend>Manual check</legend><button onclick="call('GET','/admin/api/operations?status=manual_check')">Queue</button>
<input id="oid" placeholder="operation id" size="38"><select id="dec"><option>approve</option><option>decline</option></select>
<input id="actual" placeholder="actual amount" size="10"><input id="rsn" placeholder="reason">
<button onclick="call('POST','/admin/api/operations/'+v('oid')+'/resolve',{decision:v('dec'),actual_amount:v('actual')||undefined,reason:v('rsn')})">Resolve</button></fieldset>
<fieldset><legend>Late funds (money reported after its operation ended: return it, then resolve)</legend>
<button onclick="call('GET','/admin/api/late-funds?state=open')">Open</button>
<input id="lfid" placeholder="late funds id" size="38"><input id="lfnote" placeholder="what was done with the money" size="30">
<button onclick="call('POST','/admin/api/late-funds/'+v('lfid')+'/resolve',{note:v('lfnote')})">Resolve</button></fieldset>
<fieldset><legend>Routing</legend><button onclick="call('GET','/admin/api/routes')">Routes</button></fieldset>
<pre id="out">The plaintext of an issued key, an operator token and a rotated webhook secret is shown here once.</pre>
<script>
function v(id){return document.getElementById(id).value.trim()}
async function call(method,path,body){
  const res=await fetch(path,{method,headers:{'content-type':'application/json',authorization:'Bearer '+(sessionStorage.token||'')},body:body?JSON.stringify(body):undefined});
  document.getElementById('out').textContent=res.status+' '+JSON.stringify(await res.json().catch(()=>null),null,2);
}
</script></body></html>`;
