"use strict";(self.rspackChunkjupyterlab_gradewright=self.rspackChunkjupyterlab_gradewright||[]).push([[266],{646(e,r,t){var a=t(601),n=t.n(a),o=t(314),i=(t.n(o))()(n());i.push([e.id,`/* The feedback panel: the site's own summary, in JupyterLab's colours. */
.jp-gradewright-feedback {
  padding: 12px 16px;
  overflow: auto;
  font-family: var(--jp-ui-font-family);
  color: var(--jp-ui-font-color1);
  background: var(--jp-layout-color1);
}

.jp-gradewright-feedback h2 {
  font-size: var(--jp-content-font-size3);
  margin: 0 0 8px;
}

.jp-gradewright-feedback .jp-gradewright-score {
  font-size: var(--jp-content-font-size2);
  font-weight: bold;
}

.jp-gradewright-feedback table {
  border-collapse: collapse;
  margin: 8px 0;
}

.jp-gradewright-feedback td,
.jp-gradewright-feedback th {
  padding: 2px 12px 2px 0;
  text-align: left;
}

.jp-gradewright-feedback .jp-gradewright-error {
  color: var(--jp-error-color1);
}

.jp-gradewright-feedback a {
  color: var(--jp-content-link-color);
}

.jp-gradewright-feedback .jp-gradewright-question-feedback p {
  margin: 2px 0;
}

.jp-gradewright-feedback .jp-gradewright-question-feedback p:first-child {
  font-weight: bold;
}

.jp-gradewright-feedback .jp-gradewright-question-feedback ul {
  margin: 2px 0 8px;
  padding-left: 20px;
}

.jp-gradewright-feedback .jp-gradewright-folded {
  color: var(--jp-ui-font-color2);
}
`,""]),t.d(r,{},{A:i})},314(e){e.exports=function(e){var r=[];return r.toString=function(){return this.map(function(r){var t="",a=void 0!==r[5];return r[4]&&(t+="@supports (".concat(r[4],") {")),r[2]&&(t+="@media ".concat(r[2]," {")),a&&(t+="@layer".concat(r[5].length>0?" ".concat(r[5]):""," {")),t+=e(r),a&&(t+="}"),r[2]&&(t+="}"),r[4]&&(t+="}"),t}).join("")},r.i=function(e,t,a,n,o){"string"==typeof e&&(e=[[null,e,void 0]]);var i={};if(a)for(var c=0;c<this.length;c++){var s=this[c][0];null!=s&&(i[s]=!0)}for(var p=0;p<e.length;p++){var d=[].concat(e[p]);a&&i[d[0]]||(void 0!==o&&(void 0===d[5]||(d[1]="@layer".concat(d[5].length>0?" ".concat(d[5]):""," {").concat(d[1],"}")),d[5]=o),t&&(d[2]&&(d[1]="@media ".concat(d[2]," {").concat(d[1],"}")),d[2]=t),n&&(d[4]?(d[1]="@supports (".concat(d[4],") {").concat(d[1],"}"),d[4]=n):d[4]="".concat(n)),r.push(d))}},r}},601(e){e.exports=function(e){return e[1]}},665(e,r,t){t.r(r);var a=t(72),n=t.n(a),o=t(825),i=t.n(o),c=t(659),s=t.n(c),p=t(56),d=t.n(p),u=t(540),l=t.n(u),f=t(113),g=t.n(f),h=t(646),v={};v.styleTagTransform=g(),v.setAttributes=d(),v.insert=s().bind(null,"head"),v.domAPI=i(),v.insertStyleElement=l(),n()(h.A,v);let m=h.A&&h.A.locals?h.A.locals:void 0;t.d(r,{},{default:m})},72(e){var r=[];function t(e){for(var t=-1,a=0;a<r.length;a++)if(r[a].identifier===e){t=a;break}return t}function a(e,a){for(var n={},o=[],i=0;i<e.length;i++){var c=e[i],s=a.base?c[0]+a.base:c[0],p=n[s]||0,d="".concat(s," ").concat(p);n[s]=p+1;var u=t(d),l={css:c[1],media:c[2],sourceMap:c[3],supports:c[4],layer:c[5]};if(-1!==u)r[u].references++,r[u].updater(l);else{var f=function(e,r){var t=r.domAPI(r);return t.update(e),function(r){r?(r.css!==e.css||r.media!==e.media||r.sourceMap!==e.sourceMap||r.supports!==e.supports||r.layer!==e.layer)&&t.update(e=r):t.remove()}}(l,a);a.byIndex=i,r.splice(i,0,{identifier:d,updater:f,references:1})}o.push(d)}return o}e.exports=function(e,n){var o=a(e=e||[],n=n||{});return function(e){e=e||[];for(var i=0;i<o.length;i++){var c=t(o[i]);r[c].references--}for(var s=a(e,n),p=0;p<o.length;p++){var d=t(o[p]);0===r[d].references&&(r[d].updater(),r.splice(d,1))}o=s}}},659(e){var r={};e.exports=function(e,t){var a=function(e){if(void 0===r[e]){var t=document.querySelector(e);if(window.HTMLIFrameElement&&t instanceof window.HTMLIFrameElement)try{t=t.contentDocument.head}catch(e){t=null}r[e]=t}return r[e]}(e);if(!a)throw Error("Couldn't find a style target. This probably means that the value for the 'insert' parameter is invalid.");a.appendChild(t)}},540(e){e.exports=function(e){var r=document.createElement("style");return e.setAttributes(r,e.attributes),e.insert(r,e.options),r}},56(e,r,t){e.exports=function(e){var r=t.nc;r&&e.setAttribute("nonce",r)}},825(e){e.exports=function(e){if("u"<typeof document)return{update:function(){},remove:function(){}};var r=e.insertStyleElement(e);return{update:function(t){var a,n,o;a="",t.supports&&(a+="@supports (".concat(t.supports,") {")),t.media&&(a+="@media ".concat(t.media," {")),(n=void 0!==t.layer)&&(a+="@layer".concat(t.layer.length>0?" ".concat(t.layer):""," {")),a+=t.css,n&&(a+="}"),t.media&&(a+="}"),t.supports&&(a+="}"),(o=t.sourceMap)&&"u">typeof btoa&&(a+="\n/*# sourceMappingURL=data:application/json;base64,".concat(btoa(unescape(encodeURIComponent(JSON.stringify(o))))," */")),e.styleTagTransform(a,r,e.options)},remove:function(){var e;null===(e=r).parentNode||e.parentNode.removeChild(e)}}}},113(e){e.exports=function(e,r){if(r.styleSheet)r.styleSheet.cssText=e;else{for(;r.firstChild;)r.removeChild(r.firstChild);r.appendChild(document.createTextNode(e))}}}}]);