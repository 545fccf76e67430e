/**
 * The admin console: one static page that drives the admin JSON API with the token the operator
 * types in (kept in sessionStorage, never in the page). Shops → API keys for now; later issues add
 * webhooks, balances, operations and the manual-check queue on the same API.
 */
export const CONSOLE_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Payment gateway admin</title>
<style>body{font:14px system-ui,sans-serif;margin:2rem;max-width:60rem}input,button{font:inherit;margin:.2rem}
pre{background:#f4f4f4;padding:.6rem;overflow:auto}fieldset{margin:1rem 0}</style></head>
<body><h1>Payment gateway admin</h1>
<fieldset><legend>Admin token</legend><input id="token" type="password" size="40" placeholder="ADMIN_TOKEN">
<button onclick="sessionStorage.token=document.getElementById('token').value">Use</button></fieldset>
<fieldset><legend>Merchants and shops</legend>
<input id="mname" placeholder="merchant name"><button onclick="call('POST','/admin/api/merchants',{name:v('mname')})">Create merchant</button><br>
<input id="mid" placeholder="merchant id" size="38"><input id="sname" placeholder="shop name">
<label><input id="checkout" type="checkbox"> checkout</label>
<button onclick="call('POST','/admin/api/shops',{merchant_id:v('mid'),name:v('sname'),checkout_enabled:document.getElementById('checkout').checked})">Create shop</button></fieldset>
<fieldset><legend>API keys</legend>
<input id="sid" placeholder="shop id" size="38"><input id="label" placeholder="label">
<button onclick="call('POST','/admin/api/shops/'+v('sid')+'/api-keys',{label:v('label')})">Issue key</button>
<button onclick="call('GET','/admin/api/shops/'+v('sid')+'/api-keys')">List keys</button><br>
<input id="kid" placeholder="api key id" size="38"><button onclick="call('POST','/admin/api/api-keys/'+v('kid')+'/revoke',{})">Revoke key</button></fieldset>
<pre id="out">The plaintext of an issued key is shown here once.</pre>
<script>
function v(id){return document.getElementById(id).value.trim()}
async function call(method,path,body){
  const res=await fetch(path,{method,headers:{'content-type':'application/json',authorization:'Bearer '+(sessionStorage.token||'')},body:body?JSON.stringify(body):undefined});
  document.getElementById('out').textContent=res.status+' '+JSON.stringify(await res.json().catch(()=>null),null,2);
}
</script></body></html>`;
